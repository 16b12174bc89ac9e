import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CONTINUE_AS_NEW_AFTER_EVENTS } from '../../src/contract/continue-as-new';
import {
  pollDelayMs,
  pollJitterKey,
  resolvePolling,
  type PollingSettings,
} from '../../src/contract/poll-schedule';

/** The polls a job that never ends gets before the deadline, following the workflow's own schedule. */
function pollsBeforeDeadline(settings: PollingSettings, workflowId: string): number {
  let elapsed = 0;
  let polls = 0;
  for (;;) {
    const delay = pollDelayMs(settings, polls, pollJitterKey(workflowId, polls + 1));
    if (elapsed + delay > settings.deadlineMs) return polls;
    elapsed += delay;
    polls += 1;
  }
}

describe('agentJob polling schedule', () => {
  const defaults = resolvePolling(undefined);

  test('defaults: 5 s doubling to 2 min, 24 h deadline', () => {
    assert.deepEqual(defaults, {
      initialIntervalMs: 5000,
      maxIntervalMs: 120_000,
      backoffCoefficient: 2,
      deadlineMs: 86_400_000,
    });
    const bases = [5000, 10_000, 20_000, 40_000, 80_000, 120_000, 120_000];
    bases.forEach((base, step) => {
      const delay = pollDelayMs(defaults, step, pollJitterKey('agent-job/p/k', step + 1));
      assert.ok(delay <= base && delay >= base * 0.9, `step ${step}: ${delay} ms, base ${base} ms`);
    });
  });

  test('the jitter is deterministic per workflow and poll, and differs between workflows', () => {
    const key = pollJitterKey('agent-job/p/a', 7);
    assert.equal(pollDelayMs(defaults, 6, key), pollDelayMs(defaults, 6, key));
    const delays = new Set(
      ['a', 'b', 'c', 'd', 'e'].map((k) => pollDelayMs(defaults, 6, pollJitterKey(`agent-job/p/${k}`, 7))),
    );
    assert.ok(delays.size > 1, 'workflows started together drift apart');
  });

  test('options are durations or milliseconds; coefficient 1 polls at a constant pace', () => {
    const constant = resolvePolling({
      initialInterval: 1500,
      maxInterval: '1m',
      backoffCoefficient: 1,
      deadline: '1h30m',
    });
    assert.equal(constant.deadlineMs, 5_400_000);
    for (let step = 0; step < 50; step += 7) {
      const delay = pollDelayMs(constant, step, pollJitterKey('w', step + 1));
      assert.ok(delay > 1350 && delay <= 1500);
    }
  });

  test('a 24-hour job with default polling is read about 760 times, all in poll activity attempts', (t) => {
    const polls = pollsBeforeDeadline(defaults, 'agent-job/acme/ticket-4812');
    // Those reads write no history events (agent-job.test.ts counts them on a real server): a run continues
    // as new only for long follow-up conversations, at the server's suggestion or this threshold.
    t.diagnostic(`24 h with default polling: ${polls} polls`);
    assert.ok(polls > 700 && polls < 800, `${polls} polls`);
    assert.ok(CONTINUE_AS_NEW_AFTER_EVENTS.agentJob < 10_000);
  });
});
