import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { useStack } from './helpers/stack';

const ROOT = path.resolve(__dirname, '..');
const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const stack = useStack({ name: 'package', simulator: { jobs: { durationMs: 300 } } });

/** What another service writes, in TypeScript, against the installed package's types. */
const CONSUMER = `
import { awaitAgentJob, connectClient, getAgentJobState, startAgentJob, type AgentJobResult } from 'docs-agent-worker/client';

async function main(): Promise<void> {
  const client = await connectClient();
  const input = { projectId: 'packed', prompt: 'Fix the typos', polling: { initialInterval: '200ms' } };
  const handle = await startAgentJob(client, input, { key: 'from-the-tarball' });
  const result: AgentJobResult = await awaitAgentJob(client, handle.workflowId);
  const state = await getAgentJobState(client, handle.workflowId);
  console.log(JSON.stringify({ workflowId: handle.workflowId, result, state: state.status }));
  await client.connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

describe('the package, as another service installs it', () => {
  test('npm pack builds it; installed from the tarball, its typed client starts and reads a job', async () => {
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'docs-agent-package-'));
    try {
      // Without dist/ (a fresh clone), prepack builds it: JavaScript and declarations. Nothing else ships.
      await fs.rm(path.join(ROOT, 'dist'), { recursive: true, force: true });
      const packed = await run(NPM, ['pack', '--json', '--pack-destination', scratch], { cwd: ROOT });
      // The JSON report follows whatever the build printed.
      const [info] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[\s*$/m))) as {
        filename: string;
        files: { path: string }[];
      }[];
      assert.ok(info, packed.stdout);
      const files = info.files.map((f) => f.path);
      for (const file of [
        'dist/client/index.js',
        'dist/client/index.d.ts',
        'dist/starter.js',
        'package.json',
      ]) {
        assert.ok(files.includes(file), `${file} is in the package`);
      }
      assert.deepEqual(
        files.filter((f) => !f.startsWith('dist/') && !['package.json', 'README.md', 'LICENSE'].includes(f)),
        [],
        'only dist/ ships',
      );

      await fs.writeFile(
        path.join(scratch, 'package.json'),
        JSON.stringify({ name: 'consumer', private: true }),
      );
      await run(
        NPM,
        ['install', path.join(scratch, info.filename), '--prefer-offline', '--no-audit', '--no-fund'],
        { cwd: scratch },
      );
      await fs.writeFile(path.join(scratch, 'consumer.ts'), CONSUMER);
      // The installed declarations type-check the consumer (exports map, node16 resolution), then it runs.
      await run(
        process.execPath,
        [
          path.join(ROOT, 'node_modules/typescript/bin/tsc'),
          '--strict',
          '--module',
          'node16',
          '--moduleResolution',
          'node16',
          '--target',
          'es2022',
          '--skipLibCheck',
          '--typeRoots',
          path.join(ROOT, 'node_modules/@types'),
          '--types',
          'node',
          'consumer.ts',
        ],
        { cwd: scratch },
      ).catch((error: Error & { stdout?: string }) => assert.fail(`tsc: ${error.stdout ?? error.message}`));
      const consumer = await run(process.execPath, ['consumer.js'], {
        cwd: scratch,
        env: { PATH: process.env.PATH ?? '', TEMPORAL_ADDRESS: stack.env.address },
      });
      const out = JSON.parse(consumer.stdout) as {
        workflowId: string;
        result: AgentJobResultShape;
        state: string;
      };
      assert.equal(out.workflowId, 'agent-job/packed/from-the-tarball');
      assert.equal(out.result.status, 'completed');
      assert.match(out.result.prLink ?? '', /\/pull\/\d+$/);
      assert.equal(out.state, 'completed');
      assert.equal(stack.sim.stats().jobsCreatedByProject.packed, 1);
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  });
});

interface AgentJobResultShape {
  status: string;
  prLink: string | null;
}
