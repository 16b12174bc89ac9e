import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Connection, ServiceError, WorkflowNotFoundError } from '@temporalio/client';
import { ExitCode } from '../../src/cli/command';
import { describeFailure, runCli } from '../../src/cli/main';
import { connectClient, grpcStatusOf, TemporalUnreachableError } from '../../src/client/connect';
import { freePort } from '../../dev/ports';

/** Runs `fn` with TEMPORAL_ADDRESS set, as the CLI reads it. */
async function withAddress<T>(address: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env.TEMPORAL_ADDRESS;
  process.env.TEMPORAL_ADDRESS = address;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.TEMPORAL_ADDRESS;
    else process.env.TEMPORAL_ADDRESS = before;
  }
}

describe('CLI errors: classified by type and gRPC status, never by their text', () => {
  test('no server at the address: TemporalUnreachableError naming it, exit 4', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const error = await withAddress(address, () => connectClient({ connectTimeoutMs: 300 })).then(
      () => assert.fail('connected to nothing'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof TemporalUnreachableError, String(error));
    assert.match(error.message, new RegExp(`^Temporal at ${address} \\(TEMPORAL_ADDRESS\\) is unreachable`));
    assert.match(error.message, /, that TEMPORAL_ADDRESS names it,/);
    const { code, text } = describeFailure('docs-agent job list', error);
    assert.equal(code, ExitCode.unavailable);
    assert.match(
      text,
      new RegExp(`^docs-agent job list: Temporal at ${address} \\(TEMPORAL_ADDRESS\\) is unreachable`),
    );
  });

  test("a call the server's transport refused (gRPC UNAVAILABLE): exit 4", async () => {
    // No interceptors: the SDK's default one retries UNAVAILABLE for about 20 s before it gives up.
    const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}`, interceptors: [] });
    try {
      const error = await connection.workflowService.getSystemInfo({}).then(
        () => assert.fail('answered from nowhere'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof Error);
      assert.equal(grpcStatusOf(error), 14, String(error));
      assert.equal(describeFailure('docs-agent job status', error).code, ExitCode.unavailable);
      const wrapped = new ServiceError('Failed to query workflow', { cause: error });
      assert.equal(describeFailure('docs-agent job status', wrapped).code, ExitCode.unavailable);
    } finally {
      await connection.close();
    }
  });

  test('an error whose text says "connect" or "deadline" is a failure (1), not "unreachable"', () => {
    for (const message of [
      'could not connect the repository: deadline exceeded at the service',
      '14 UNAVAILABLE: ECONNREFUSED (quoted from a job failure)',
    ]) {
      const { code, text } = describeFailure('docs-agent job start', new Error(message));
      assert.equal(code, ExitCode.failed, message);
      assert.doesNotMatch(text, /unreachable/);
    }
  });

  test('not found is 3', () => {
    const error = new WorkflowNotFoundError('no such workflow', 'agent-job/p/k', undefined);
    assert.equal(describeFailure('docs-agent job status', error).code, ExitCode.notFound);
  });
});

/** Runs the CLI in this process (commands that print help, and contact no server), capturing its output. */
async function runCaptured(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const io = {
    stdout: { write: (text: string) => (out.stdout += text) },
    stderr: { write: (text: string) => (out.stderr += text) },
  };
  return { code: await runCli(argv, io), ...out };
}

describe('CLI help', () => {
  test('every group and every command answers --help; a group alone is a usage error', async () => {
    for (const [group, commands] of [
      ['job', ['start', 'message', 'status', 'list', 'cancel', 'reset']],
      ['export', ['run', 'status', 'list']],
      ['schedule', ['create', 'update', 'describe', 'pause', 'unpause', 'trigger', 'backfill', 'delete']],
    ] as const) {
      const help = await runCaptured(group, '--help');
      assert.equal(help.code, 0, `${group} --help: ${help.stderr}`);
      assert.match(help.stdout, new RegExp(`^Usage: docs-agent ${group} \\[options\\] \\[command\\]`));
      for (const command of commands) {
        assert.match(help.stdout, new RegExp(`^  ${command} \\[options\\] +\\S`, 'm'));
        const own = await runCaptured(group, command, '--help');
        assert.equal(own.code, 0);
        assert.match(own.stdout, new RegExp(`^Usage: docs-agent ${group} ${command} \\[options\\]`));
        assert.match(own.stdout, /^Global Options:\n {2}--version /m);
        assert.match(
          own.stdout,
          /^Exit codes: 0 ok, 1 failed, 2 bad arguments, 3 not found, 4 Temporal unreachable\.$/m,
        );
      }
      assert.doesNotMatch(help.stdout, /^ {2}setup /m, 'only the group');
      const bare = await runCaptured(group);
      assert.equal(bare.code, 2, 'a group without a command is a usage error');
      assert.equal(bare.stdout, '');
      assert.match(bare.stderr, new RegExp(`^Usage: docs-agent ${group} \\[options\\] \\[command\\]`));
      const unknown = await runCaptured(group, 'launch');
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, new RegExp(`^docs-agent ${group}: unknown command 'launch'`));
    }
    const overview = await runCaptured('--help');
    assert.match(overview.stdout, /^ {2}setup \[options\] +check the namespace/m);
    for (const group of ['job', 'export', 'schedule'])
      assert.match(overview.stdout, new RegExp(`^  ${group} `, 'm'));
    const bare = await runCaptured();
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /^Usage: docs-agent \[options\] \[command\]/);
    assert.equal((await runCaptured('setup', '--help')).code, 0);
  });
});
