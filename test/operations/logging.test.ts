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
    logger.warn('head stays', { message: 'not me', level: 'nope' });
    logger.warn('cyclic', { cycle });
    const [first, second] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(first?.message, 'head stays');
    assert.equal(first?.level, 'warn');
    assert.deepEqual(second, { ...second, message: 'cyclic', unserializableFields: ['cycle'] });
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
