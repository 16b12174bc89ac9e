import { execFile } from 'node:child_process';
import path from 'node:path';

const STARTER = path.resolve(__dirname, '../src/starter.ts');

export interface StarterRun {
  /** The process's exit code (null when it was killed). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The project's CLI (`docs-agent …`, src/starter.ts) as an operator runs it, against the server at `address`. */
export function starter(address: string, args: string[]): Promise<StarterRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, ...args],
      { env: { PATH: process.env.PATH ?? '', TEMPORAL_ADDRESS: address } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
