import { pollDelayMs } from '../../src/activities/agent-job';
import type { PollingSettings } from '../../src/workflows/agent-job/state';

/** Poll times (ms after the create) until the first one at or after `doneAtMs`: the poll activity's schedule. */
export function pollSchedule(settings: PollingSettings, workflowId: string, doneAtMs: number): number[] {
  const times: number[] = [];
  let at = 0;
  for (let reads = 0; at < doneAtMs; reads += 1) {
    at += pollDelayMs(settings, reads, `${workflowId}#${reads + 1}`);
    times.push(at);
  }
  return times;
}
