import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { describeDeployment } from '../../src/client/setup';
import { startWorkerProcess } from '../../dev/worker-process';
import { workflowBundlePath } from '../../dev/workflow-bundle';
import { useProcessStack } from '../helpers/stack';
import { tempDir } from '../helpers/temp-dir';
import {
  DEPLOYMENT_NAME,
  FAST_DRAINAGE,
  makeCurrent,
  versionEnv,
  versionPolled,
} from '../helpers/versioning';

// docs/upgrading.md followed to the letter, as a script runs it: no terminal to answer a prompt, every command
// as written, against a dev server with workers of two versions of the deployment the docs name.
const DOC = path.resolve(__dirname, '../../docs/upgrading.md');
const STARTER = path.resolve(__dirname, '../../src/starter.ts');

const stack = useProcessStack({
  name: 'upgrading-docs',
  workers: 1,
  workerEnv: versionEnv('v1'),
  temporal: { dynamicConfig: FAST_DRAINAGE },
});

/** A directory with `docs-agent`, as `npm install -g` would put it on PATH. */
const shimDir = tempDir('upgrading-docs-bin').then(async (dir) => {
  const shim = `#!/bin/sh\nexec "${process.execPath}" --import tsx "${STARTER}" "$@"\n`;
  await fs.writeFile(path.join(dir, 'docs-agent'), shim, { mode: 0o755 });
  return dir;
});

/** The fenced `sh` blocks of a section of the doc, in order. */
async function shellBlocks(heading: string): Promise<string[]> {
  const doc = await fs.readFile(DOC, 'utf8');
  const start = doc.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `docs/upgrading.md has a section "${heading}"`);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].map(([, indent = '', body = '']) =>
    body.replace(new RegExp(`^${indent}`, 'gm'), ''),
  );
}

/** Runs a script with bash -e, stdin closed (a prompt fails it), `docs-agent` and `temporal` on PATH. */
async function runScript(
  script: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = await shimDir;
  const cli = process.env.TEMPORAL_CLI_PATH;
  const dirs = [bin, ...(cli ? [path.dirname(cli)] : []), process.env.PATH ?? ''];
  return new Promise((resolve) => {
    const child = execFile(
      'bash',
      ['-e', '-c', script],
      {
        env: {
          PATH: dirs.join(':'),
          HOME: process.env.HOME ?? '',
          TEMPORAL_ADDRESS: stack.env.address,
          TEMPORAL_NAMESPACE: 'default',
          ...env,
        },
        timeout: 60_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

async function current(): Promise<string | undefined> {
  return (await describeDeployment(stack.env.client, DEPLOYMENT_NAME)).current;
}

test("docs/upgrading.md's deploy runs as a script: v1 -> v2 with docs-agent, back, again with the Temporal CLI", async () => {
  const { env, sim, exportDir } = stack;
  await makeCurrent(env.client, env.address, 'v1');
  const v2 = startWorkerProcess({
    temporalAddress: env.address,
    service: sim,
    exportDir,
    env: { ...versionEnv('v2'), WORKER_WORKFLOW_BUNDLE: await workflowBundlePath({ traced: false }) },
  });
  try {
    await v2.ready;
    await versionPolled(env.client, 'v2');
    const [withSetup, withCli, watch, rollback, ...more] = await shellBlocks('The deploy');
    assert.deepEqual(more, [], 'the deploy has the four scripts this test runs');
    const run = async (script: string | undefined, then: string | undefined) => {
      assert.ok(script);
      const result = await runScript(script);
      assert.equal(result.code, 0, `${script}\n${result.stdout}\n${result.stderr}`);
      assert.equal(await current(), then, script);
      return result;
    };
    assert.match((await run(withSetup, 'v2')).stdout, /^deployment docs-agent: current v2$/m);
    await run(rollback, 'v1');
    await run(withCli, 'v2');
    assert.match((await run(watch, 'v2')).stdout, /DrainageStatus/);
  } finally {
    await v2.kill('SIGTERM');
  }
});

test("docs-agent setup with the worker's environment: a deployment name and no build id", async () => {
  const workerEnv = { TEMPORAL_DEPLOYMENT_NAME: DEPLOYMENT_NAME };
  const shown = await runScript('docs-agent setup', workerEnv);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^deployment docs-agent: current v\d$/m);
  assert.match(shown.stdout, /^ {2}v1: /m);

  const routing = await runScript('docs-agent setup --set-current', workerEnv);
  assert.equal(routing.code, 2, routing.stdout);
  assert.match(
    routing.stderr,
    /--set-current needs the version's build id: --build-id, or TEMPORAL_WORKER_BUILD_ID/,
  );

  // In the image: the build id the worker joins is stamped, and setup routes to the same one.
  const { version } = JSON.parse(
    await fs.readFile(path.resolve(__dirname, '../../package.json'), 'utf8'),
  ) as {
    version: string;
  };
  const stamped = await runScript('docs-agent setup --set-current', {
    ...workerEnv,
    DOCS_AGENT_GIT_SHA: '3f2a9c1',
  });
  assert.equal(stamped.code, 1, stamped.stderr);
  assert.match(stamped.stdout, new RegExp(`no worker of version ${version}-3f2a9c1 has polled yet`));

  const joined = await runScript('docs-agent setup --set-current', { ...workerEnv, ...versionEnv('v1') });
  assert.equal(joined.code, 0, `${joined.stdout}\n${joined.stderr}`);
  assert.equal(await current(), 'v1', 'routed to the version the worker joins');
});
