import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Worker } from '@temporalio/worker';
import { installQuietRuntime, workflowBundle } from '../helpers/temporal';
import { historyBytes, historyFromJson } from './history-json';

// Histories recorded by `npx tsx scripts/record-histories.ts` against the simulator. Replaying them with
// today's bundle proves a code change keeps old runs deterministic; re-record only for intended changes
// (and then with patched() for runs already in production).
const HISTORIES_DIR = path.join(__dirname, 'histories');
const files = fs
  .readdirSync(HISTORIES_DIR)
  .filter((name) => name.startsWith('agent-job') && name.endsWith('.json'))
  .sort();

interface RecordedEvent {
  eventType: string;
}

function load(name: string): { text: string; events: RecordedEvent[] } {
  const text = fs.readFileSync(path.join(HISTORIES_DIR, name), 'utf8');
  return { text, events: (JSON.parse(text) as { events: RecordedEvent[] }).events };
}

/**
 * The recorded workflow id. Replay must use it: the poll jitter is derived from the workflow id (like any
 * workflowInfo() field, it is part of the run's deterministic input), so a made-up id replays other timers.
 */
function workflowIdOf(history: ReturnType<typeof historyFromJson>): string {
  const workflowId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId;
  assert.ok(workflowId, 'the first event names the workflow id');
  return workflowId;
}

const count = (events: RecordedEvent[], suffix: string) =>
  events.filter((event) => event.eventType.endsWith(suffix)).length;

describe('agentJob: replay of committed histories', () => {
  test('the committed histories include a long job and a continued-as-new run', () => {
    assert.ok(files.includes('agent-job-long.json'), `histories: ${files.join(', ')}`);
    const long = load('agent-job-long.json').events;
    assert.ok(count(long, 'TIMER_FIRED') >= 20, 'a long job: many polls');
    assert.ok(count(long, 'SIGNALED') >= 3, 'with follow-ups by signal');
    assert.ok(count(long, 'UPDATE_COMPLETED') >= 1, 'and by update');
    assert.ok(
      files.some((name) => count(load(name).events, 'CONTINUED_AS_NEW') === 1),
      'a continued-as-new run',
    );
  });

  for (const name of files) {
    test(`replays ${name} deterministically with the current workflow code`, async () => {
      installQuietRuntime();
      const history = historyFromJson(load(name).text);
      assert.ok(!/bearer|authorization/i.test(historyBytes(history).toString('latin1')), 'no credentials');
      await Worker.runReplayHistory(
        { workflowBundle: await workflowBundle() },
        history,
        workflowIdOf(history),
      );
    });
  }
});
