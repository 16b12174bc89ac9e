import { pollDelayMs, pollJitterKey, type PollingSettings } from '../../src/contract/poll-schedule';

/** Poll times (ms after the create) until the first one at or after `doneAtMs`: the workflow's schedule. */
export function pollSchedule(settings: PollingSettings, workflowId: string, doneAtMs: number): number[] {
  const times: number[] = [];
  let at = 0;
  for (let step = 0; at < doneAtMs; step += 1) {
    at += pollDelayMs(settings, step, pollJitterKey(workflowId, times.length + 1));
    times.push(at);
  }
  return times;
}
