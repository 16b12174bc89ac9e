import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LogTimestamp } from '@temporalio/worker';
import { coreLogFilter, createLogger } from '../../src/operations/logging';
import { ApiKey } from '../../src/docs-api/api-key';

function capture(format: 'text' | 'json', level: 'error' | 'warn' | 'info' | 'debug') {
  const lines: string[] = [];
  const key = new ApiKey('live_s3cr3t-value-123');
  const logger = createLogger({
    format,
    level,
    redact: (line) => key.redact(line),
    write: (l) => lines.push(l),
  });
  return { logger, lines };
}

describe('createLogger', () => {
  test('json: one object a line with time, level, message first, then the fields', () => {
    const { logger, lines } = capture('json', 'info');
    const cause = new Error('socket hang up');
    logger.info('Activity completed', {
      [LogTimestamp]: 1_764_000_000_123_000_000n,
      workflowId: 'wf-1',
      activityType: 'pollAgentJob',
      attempt: 2,
      durationMs: 12n,
      error: new Error('boom', { cause }),
    });
    const [text = ''] = lines;
    assert.equal(lines.length, 1);
    assert.ok(text.endsWith('\n') && !text.slice(0, -1).includes('\n'));
    const line = JSON.parse(text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(line).slice(0, 3), ['time', 'level', 'message']);
    assert.equal(line.time, '2025-11-24T16:00:00.123Z');
    assert.equal(line.level, 'info');
    assert.equal(line.message, 'Activity completed');
    assert.equal(line.workflowId, 'wf-1');
    assert.equal(line.activityType, 'pollAgentJob');
    assert.equal(line.durationMs, '12');
    const error = line.error as { name: string; message: string; stack: string; cause: { message: string } };
    assert.equal(error.message, 'boom');
    assert.match(error.stack, /Error: boom/);
    assert.equal(error.cause.message, 'socket hang up');
  });

  test('a field cannot replace the head, and a cycle keeps the line parseable', () => {
    const { logger, lines } = capture('json', 'info');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const error = Object.assign(new Error('cyclic'), { cycle });
    logger.warn('head stays', { message: 'not me', level: 'nope' });
    logger.warn('cyclic', { cycle });
    logger.warn('cyclic error', { error });
    const [first, second, third] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(first?.message, 'head stays');
    assert.equal(first?.level, 'warn');
    assert.deepEqual(second?.cycle, { self: '[Circular]' });
    assert.deepEqual(third, { ...third, message: 'cyclic error', unserializableFields: ['error'] });
  });

  test('no token or secret is written, in a field at any depth or in the core text, in both formats', () => {
    for (const format of ['json', 'text'] as const) {
      const { logger, lines } = capture(format, 'debug');
      logger.warn('Activity failed', {
        taskToken: 'CiQ3ZjNhYmMtdGFzay10b2tlbg==',
        activityType: 'pollAgentJob',
        task: { task_token: 'CiQ3ZjNh-nested', attempt: 2 },
        calls: [{ authorization: 'Bearer abc', apiKey: 'k-1', password: 'p', clientSecret: 's' }],
        error: new Error('boom'),
      });
      logger.debug('New WFT', {
        action: 'NewWft(PreparedWFT { task_token: TaskToken(CiQ3ZjNh+/=), attempt: 1 })',
      });
      const [activity = '', core = ''] = lines;
      assert.doesNotMatch(
        activity,
        /CiQ3ZjNh|Bearer abc|k-1|token|authorization|apiKey|password|secret/i,
        activity,
      );
      assert.match(activity, /pollAgentJob/);
      assert.match(activity, /attempt/);
      assert.match(activity, /boom/);
      assert.match(
        core,
        /task_token: TaskToken\(\*\*\*\*\), attempt: 1/,
        'the core prints the token in a text',
      );
    }
  });

  test('mute: an entry it returns true for is not written', () => {
    const lines: string[] = [];
    const logger = createLogger({
      format: 'json',
      level: 'info',
      write: (line) => lines.push(line),
      mute: (entry) => entry.message === 'noise',
    });
    logger.warn('noise');
    logger.warn('signal');
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { message: string }).message),
      ['signal'],
    );
  });

  test('LOG_LEVEL filters: warn keeps warn and error', () => {
    const { logger, lines } = capture('json', 'warn');
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { level: string }).level),
      ['warn', 'error'],
    );
  });

  test('the key is redacted from every line, in both formats', () => {
    for (const format of ['json', 'text'] as const) {
      const { logger, lines } = capture(format, 'debug');
      logger.error('request to https://x failed: Bearer live_s3cr3t-value-123', {
        header: 's3cr3t-value-123',
      });
      assert.equal(lines.length, 1);
      assert.ok(!lines[0]?.includes('s3cr3t-value-123'), lines[0]);
      assert.match(lines[0] ?? '', /live_\*\*\*\*/);
    }
  });

  test('text: the SDK form, date [LEVEL] message {fields}', () => {
    const { logger, lines } = capture('text', 'info');
    logger.info('Worker started', { [LogTimestamp]: 1_764_000_000_000_000_000n, taskQueue: 'docs-agent' });
    assert.equal(lines[0], "2025-11-24T16:00:00.000Z [INFO] Worker started { taskQueue: 'docs-agent' }\n");
  });
});

test('coreLogFilter: the core at WARN for info, opened by debug, closed to ERROR by error', () => {
  assert.match(coreLogFilter('info'), /temporalio_sdk_core=WARN/);
  assert.match(coreLogFilter('debug'), /temporalio_sdk_core=DEBUG/);
  assert.match(coreLogFilter('error'), /temporalio_sdk_core=ERROR/);
});
