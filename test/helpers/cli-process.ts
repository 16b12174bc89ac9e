import { execFile } from 'node:child_process';
import path from 'node:path';
import { DEFAULT_TASK_QUEUE } from '../../src/contract/names';

const STARTER = path.resolve(__dirname, '../../src/starter.ts');

/** `docs-agent <args>` as its own process against the dev server at `address`, with its exit code and output. */
export function runCli(
  address: string,
  args: string[],
  taskQueue = DEFAULT_TASK_QUEUE,
): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, ...args],
      {
        env: {
          PATH: process.env.PATH ?? '',
          TEMPORAL_ADDRESS: address,
          TEMPORAL_NAMESPACE: 'default',
          TEMPORAL_TASK_QUEUE: taskQueue,
        },
      },
      (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout }),
    );
  });
}
