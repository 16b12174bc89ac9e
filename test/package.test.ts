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
/** The bound for a service that only starts and steers workflows. */
const MAX_INSTALL_MB = 60;

const stack = useStack({ name: 'package', simulator: { jobs: { durationMs: 300 } } });

/** What another service writes, in TypeScript, against the installed package's types. */
const CONSUMER = `
import { awaitAgentJob, connectClient, getAgentJobState, startAgentJob, type AgentJobResult } from '@docs-agent/client';
import { docsAgentNexusService } from '@docs-agent/client/nexus';

async function main(): Promise<void> {
  const client = await connectClient();
  const input = { projectId: 'packed', prompt: 'Fix the typos', polling: { initialInterval: '200ms' } };
  const handle = await startAgentJob(client, input, { key: 'from-the-tarball' });
  const result: AgentJobResult = await awaitAgentJob(client, handle.workflowId);
  const state = await getAgentJobState(client, handle.workflowId);
  console.log(JSON.stringify({ workflowId: handle.workflowId, result, state: state.status, nexus: docsAgentNexusService.name }));
  await client.connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

async function sizeOf(dir: string): Promise<number> {
  let bytes = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) bytes += await sizeOf(file);
    else if (entry.isFile()) bytes += (await fs.stat(file)).size;
  }
  return bytes;
}

describe('@docs-agent/client, as another service installs it', () => {
  test('packed from the checkout, installed light, it type-checks a consumer that runs a job', async () => {
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'docs-agent-package-'));
    try {
      // prepack builds dist/ from src/contract and src/client: the consumer's install compiles nothing.
      await fs.rm(path.join(ROOT, 'packages/client/dist'), { recursive: true, force: true });
      const packed = await run(
        NPM,
        ['pack', '-w', 'packages/client', '--json', '--pack-destination', scratch],
        {
          cwd: ROOT,
        },
      );
      const [info] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[\s*$/m))) as {
        filename: string;
        files: { path: string }[];
      }[];
      assert.ok(info, packed.stdout);
      const files = info.files.map((f) => f.path);
      for (const file of ['dist/client/index.js', 'dist/client/index.d.ts', 'dist/client/nexus-caller.js']) {
        assert.ok(files.includes(file), `${file} is in the package`);
      }
      assert.deepEqual(
        files.filter((f) => /^dist\/(workflows|activities|exports|docs-api|tracing|cli)\//.test(f)),
        [],
        'no worker code ships',
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
      const modules = path.join(scratch, 'node_modules');
      for (const heavy of [
        '@temporalio/worker',
        '@temporalio/core-bridge',
        '@aws-sdk',
        '@opentelemetry/sdk-node',
      ]) {
        await assert.rejects(fs.access(path.join(modules, heavy)), `${heavy} is not installed`);
      }
      const megabytes = (await sizeOf(modules)) / 1024 / 1024;
      assert.ok(
        megabytes <= MAX_INSTALL_MB,
        `installed ${megabytes.toFixed(1)} MB, at most ${MAX_INSTALL_MB}`,
      );

      await fs.writeFile(path.join(scratch, 'consumer.ts'), CONSUMER);
      // The installed declarations type-check the consumer (exports map, node16 resolution), then it runs.
      await run(
        process.execPath,
        [
          path.join(ROOT, 'node_modules/typescript/bin/tsc'),
          ...['--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022'],
          ...['--skipLibCheck', '--typeRoots', path.join(ROOT, 'node_modules/@types'), '--types', 'node'],
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
        result: { status: string; prLink: string | null };
        state: string;
        nexus: string;
      };
      assert.equal(out.workflowId, 'agent-job/packed/from-the-tarball');
      assert.equal(out.result.status, 'completed');
      assert.match(out.result.prLink ?? '', /\/pull\/\d+$/);
      assert.equal(out.state, 'completed');
      assert.equal(out.nexus, 'docs-agent');
      assert.equal(stack.sim.stats().jobsCreatedByProject.packed, 1);
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  });
});
