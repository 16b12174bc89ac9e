import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@temporalio/client';
import { awaitAgentJob, sendFollowUpAndWait, startAgentJob } from '../../src/client/agent-job';
import { ENCRYPTED_ENCODING } from '../../src/codec/aes-gcm-codec';
import { dataConverterFromEnv } from '../../src/codec/aes-gcm-codec';
import { DEFAULT_TASK_QUEUE, WorkflowType, agentJobWorkflowId } from '../../src/contract/names';
import { temporalCliPath } from '../../dev/temporal';
import { TEST_POLLING, eventually, requestsOf, uniqueProject } from '../workflows/agent-job-harness';
import { historyBytes } from '../../dev/history-json';
import { useProcessStack } from '../helpers/stack';

const STARTER = path.resolve(__dirname, '../../src/starter.ts');
const CODEC_SERVER = path.resolve(__dirname, '../../src/codec/codec-server-main.ts');
const OLD_KEY = `2026-10:${crypto.randomBytes(32).toString('base64')}`;
const NEW_KEY = `2026-11:${crypto.randomBytes(32).toString('base64')}`;
/** After rotation: the new key encrypts, the old one still decrypts. */
const KEYS = `${NEW_KEY},${OLD_KEY}`;

const stack = useProcessStack({
  name: 'encrypted',
  simulator: { jobs: { durationMs: 1500 } },
  workerEnv: { PAYLOAD_CODEC_KEYS: KEYS },
});
let codecServer: ChildProcess | undefined;
let codecEndpoint: string;
let codecServerOutput = '';

// Needs nothing of the stack, so it starts alongside it; killed even when it never came to listen.
before(async () => {
  const server = spawn(process.execPath, ['--import', 'tsx', CODEC_SERVER], {
    env: { PATH: process.env.PATH ?? '', PAYLOAD_CODEC_KEYS: KEYS, CODEC_SERVER_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  codecServer = server;
  server.stdout?.on('data', (chunk: Buffer) => (codecServerOutput += chunk.toString('utf8')));
  server.stderr?.on('data', (chunk: Buffer) => (codecServerOutput += chunk.toString('utf8')));
  const port = await eventually(
    () => /codec server on http:\/\/127\.0\.0\.1:(\d+)/.exec(codecServerOutput)?.[1],
    'the codec server to listen',
  );
  codecEndpoint = `http://127.0.0.1:${port}`;
});
after(() => {
  codecServer?.kill('SIGTERM');
});

function encryptingClient(keys: string): Client {
  const dataConverter = dataConverterFromEnv({ PAYLOAD_CODEC_KEYS: keys });
  assert.ok(dataConverter);
  return new Client({ connection: stack.env.connection, dataConverter });
}

/** Every payload of a history object (search attributes aside: the server must read those). */
/**
 * The SDK's own marker bookkeeping is plain JSON by design and holds no user data: a patch marker's
 * `patch-data` ({ id, deprecated }) and a local activity marker's `data` (seq, attempt, activity type, times).
 * The local activity's result (`details.result`) goes through the codec like every other payload.
 */
function isSdkMarkerBookkeeping(trail: string[]): boolean {
  const at = trail.indexOf('markerRecordedEventAttributes');
  return at >= 0 && trail[at + 1] === 'details' && ['patch-data', 'data'].includes(trail[at + 2] ?? '');
}

function payloadEncodings(node: unknown, trail: string[] = [], found: string[] = []): string[] {
  if (node === null || typeof node !== 'object' || ArrayBuffer.isView(node)) return found;
  const record = node as Record<string, unknown>;
  const metadata = record.metadata as Record<string, Uint8Array> | undefined;
  if (metadata?.encoding instanceof Uint8Array && 'data' in record) {
    if (!trail.includes('searchAttributes') && !isSdkMarkerBookkeeping(trail)) {
      found.push(Buffer.from(metadata.encoding).toString('utf8'));
    }
    return found;
  }
  for (const [key, value] of Object.entries(record)) payloadEncodings(value, [...trail, key], found);
  return found;
}

function run(
  command: string,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          TEMPORAL_ADDRESS: stack.env.address,
          TEMPORAL_NAMESPACE: 'default',
          ...extraEnv,
        },
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const temporal = (...args: string[]) => {
  const cli = temporalCliPath();
  assert.ok(cli, 'the temporal CLI is needed (TEMPORAL_CLI_PATH or PATH)');
  return run(cli, [...args, '--address', stack.env.address]);
};
const starter = (args: string[], extraEnv: Record<string, string> = {}) =>
  run(process.execPath, ['--import', 'tsx', STARTER, ...args], extraEnv);

/** The workflow input of `temporal workflow show -o json`, its encoding and data decoded from base64. */
function startInput(shown: { code: number; stdout: string; stderr: string }): {
  encoding: string;
  data: string;
} {
  assert.equal(shown.code, 0, shown.stderr);
  const history = JSON.parse(shown.stdout) as {
    events: { workflowExecutionStartedEventAttributes?: { input: { payloads: JsonPayload[] } } }[];
  };
  const payload = history.events[0]?.workflowExecutionStartedEventAttributes?.input.payloads[0];
  const fromBase64 = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');
  return { encoding: fromBase64(payload?.metadata.encoding), data: fromBase64(payload?.data) };
}

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

describe('payload encryption (PAYLOAD_CODEC_KEYS) on the dev server', () => {
  test('the worker says encryption is on, and neither process prints key material', () => {
    const { worker } = stack;
    assert.match(worker.output(), /AES-256-GCM/);
    assert.match(codecServerOutput, /keys: 2026-11, 2026-10/);
    for (const key of [NEW_KEY, OLD_KEY]) {
      const material = key.split(':')[1] ?? '';
      assert.ok(!worker.output().includes(material) && !codecServerOutput.includes(material));
    }
  });

  test('mid-rotation: a client still encrypting with the old key runs a job; history holds ciphertext only', async () => {
    const { env, sim } = stack;
    const projectId = uniqueProject('enc');
    const secretPrompt = `Document the unreleased pricing ${crypto.randomUUID()}`;
    const secretFollowUp = `Also mention the partner discount ${crypto.randomUUID()}`;
    // Rotation step 1 (the new key known everywhere, not yet first) on the client; step 2 on the worker.
    const oldClient = encryptingClient(`${OLD_KEY},${NEW_KEY}`);
    const handle = await startAgentJob(
      oldClient,
      { projectId, prompt: secretPrompt, polling: TEST_POLLING },
      { key: 'enc' },
    );
    await sendFollowUpAndWait(oldClient, handle.workflowId, { prompt: secretFollowUp, messageId: 'm1' });
    // A client with both keys, as every service that holds them would run.
    const result = await awaitAgentJob(encryptingClient(KEYS), handle.workflowId);
    assert.equal(result.status, 'completed');
    assert.deepEqual(
      result.followUps.map((f) => [f.prompt, f.status]),
      [[secretFollowUp, 'delivered']],
    );
    const seen = requestsOf(sim, { projectId }).map((r) => r.prompt);
    assert.ok(seen.includes(secretPrompt) && seen.includes(secretFollowUp), 'the service got plaintext');

    const history = await env.client.workflow.getHandle(handle.workflowId).fetchHistory();
    const encodings = payloadEncodings(history);
    assert.ok(encodings.length >= 6, `few payloads found: ${encodings.length}`);
    assert.deepEqual(new Set(encodings), new Set([ENCRYPTED_ENCODING]));
    const bytes = historyBytes(history);
    for (const secret of [secretPrompt, secretFollowUp, result.prLink ?? 'no PR link']) {
      assert.ok(!bytes.includes(secret), `plaintext in the history: ${secret.slice(0, 20)}`);
    }

    await assert.rejects(env.client.workflow.getHandle(handle.workflowId).result(), /binary\/encrypted/);
    const oldOnlyClient = encryptingClient(OLD_KEY);
    await assert.rejects(
      oldOnlyClient.workflow.getHandle(handle.workflowId).result(),
      /key id "2026-11", which is not among the configured keys/,
      'results are written under the new key, which a client without it cannot read',
    );
  });

  test('the official temporal CLI starts, signals and reads a job through the codec server', async () => {
    const { sim } = stack;
    const projectId = uniqueProject('enc-cli');
    const workflowId = agentJobWorkflowId(projectId, 'cli');
    const secretPrompt = `CLI prompt ${crypto.randomUUID()}`;
    const secretFollowUp = `CLI follow-up ${crypto.randomUUID()}`;
    const codec = ['--codec-endpoint', codecEndpoint];
    const started = await temporal(
      'workflow',
      'start',
      ...codec,
      '--type',
      WorkflowType.agentJob,
      '--task-queue',
      DEFAULT_TASK_QUEUE,
      '--workflow-id',
      workflowId,
      '--input',
      JSON.stringify({ projectId, prompt: secretPrompt, polling: TEST_POLLING }),
    );
    assert.equal(started.code, 0, started.stderr);
    const signalled = await temporal(
      'workflow',
      'signal',
      ...codec,
      '--workflow-id',
      workflowId,
      '--name',
      'followUp',
      '--input',
      JSON.stringify({ prompt: secretFollowUp, messageId: 'cli-1' }),
    );
    assert.equal(signalled.code, 0, signalled.stderr);
    const result = await temporal('workflow', 'result', ...codec, '--workflow-id', workflowId, '-o', 'json');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /"prLink": "https:/);
    assert.ok(result.stdout.includes(secretFollowUp), 'the CLI shows the decoded result');
    const seen = requestsOf(sim, { projectId }).map((r) => r.prompt);
    assert.ok(seen.includes(secretPrompt) && seen.includes(secretFollowUp));

    const raw = startInput(await temporal('workflow', 'show', '--workflow-id', workflowId, '-o', 'json'));
    assert.equal(raw.encoding, ENCRYPTED_ENCODING, 'the CLI encrypted the input through the codec server');
    assert.ok(!raw.data.includes(secretPrompt));
    const shown = startInput(
      await temporal('workflow', 'show', ...codec, '--workflow-id', workflowId, '-o', 'json'),
    );
    assert.equal(shown.encoding, 'json/plain');
    assert.ok(shown.data.includes(secretPrompt), 'the codec server decodes the history for the CLI');
  });

  test("this package's CLI reads with the keys and says why it cannot without them", async () => {
    const projectId = uniqueProject('enc-starter');
    const started = await starter(
      [
        'job',
        'start',
        '--project',
        projectId,
        '--prompt',
        'Starter prompt',
        '--key',
        'k',
        '--wait',
        '--json',
      ],
      { PAYLOAD_CODEC_KEYS: KEYS },
    );
    assert.equal(started.code, 0, started.stderr);
    assert.match(started.stdout, /"prLink": "https:/);
    const workflowId = agentJobWorkflowId(projectId, 'k');
    const status = await starter(['job', 'status', '--workflow-id', workflowId, '--json'], {
      PAYLOAD_CODEC_KEYS: KEYS,
    });
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /"status": "completed"/);
    const keyless = await starter(['job', 'status', '--workflow-id', workflowId]);
    assert.equal(keyless.code, 1);
    assert.match(keyless.stderr, /payloads are encrypted: set PAYLOAD_CODEC_KEYS/);
    assert.ok(!keyless.stdout.includes('COMPLETED'), 'no status shown as if it had been read');
  });

  test('an export runs encrypted and writes its file as usual', async () => {
    const { sim } = stack;
    const projectId = uniqueProject('enc-export');
    sim.configureProject(projectId, { visitorPaths: 30 });
    const exported = await starter(
      ['export', 'run', '--project', projectId, '--from', '2026-11-01', '--to', '2026-11-02', '--json'],
      { PAYLOAD_CODEC_KEYS: KEYS },
    );
    assert.equal(exported.code, 0, exported.stderr);
    const result = JSON.parse(exported.stdout) as { rows: number; files: string[] };
    assert.equal(result.rows, 30);
    const csv = await fs.readFile(result.files[0] ?? '', 'utf8');
    assert.equal(csv.trim().split('\n').length, 31);
  });
});
