import type { FaultRule, RouteName } from '../dev/simulator';

const READS: RouteName[] = ['getJob', 'getVisitors'];
const WRITES: RouteName[] = ['createJob', 'sendMessage'];

/**
 * The faults the simulator injects throughout a campaign. 503 and 429 are answers the service gives before
 * acting, so every route may be retried; the 502-after-processing, resets and malformed bodies on writes are
 * the cases whose outcome the worker cannot know, which it must report rather than re-send. Without
 * `rateLimits`, no 429 is injected: the budgets' are then the only ones.
 */
export function campaignFaults(hangs: number, { rateLimits = true } = {}): FaultRule[] {
  return [
    // The first writes certainly meet the unknown-outcome cases, whatever the random draws.
    { route: 'createJob', kind: 'reset', afterProcessing: true, times: 1 },
    { route: 'sendMessage', kind: 'status', status: 502, afterProcessing: true, times: 2 },
    { route: '*', kind: 'status', status: 503, probability: 0.2 },
    ...(rateLimits
      ? [{ route: '*', kind: 'rateLimit', retryAfter: { seconds: 1 }, probability: 0.05 } as const]
      : []),
    ...READS.flatMap((route): FaultRule[] => [
      { route, kind: 'reset', probability: 0.03 },
      { route, kind: 'malformed', malformed: 'truncated-json', probability: 0.02 },
      { route, kind: 'malformed', malformed: 'html-200', probability: 0.02 },
    ]),
    { route: 'getJob', kind: 'drift', drift: 'unknown-status', probability: 0.02 },
    ...WRITES.flatMap((route): FaultRule[] => [
      { route, kind: 'status', status: 502, afterProcessing: true, probability: 0.01 },
      { route, kind: 'reset', probability: 0.01 },
    ]),
    { route: 'getJob', kind: 'hang', times: hangs, probability: 0.05 },
  ];
}

/**
 * The operator campaign's faults: answers that leave no doubt whether the service acted (503 and 429 before it
 * acted), so that a follow-up accepted and never sent stands out in the request log, plus a few creates and
 * messages answered 502 after the service acted (outcome unknown to the worker, processed in the log): the
 * cases that a reset or a resend could turn into a second job or a second message.
 */
export function operatorFaults(): FaultRule[] {
  return [
    { route: 'createJob', kind: 'status', status: 502, afterProcessing: true, times: 1 },
    { route: '*', kind: 'status', status: 503, probability: 0.1 },
    { route: 'sendMessage', kind: 'rateLimit', retryAfter: { seconds: 1 }, probability: 0.03 },
    ...WRITES.map((route): FaultRule => ({
      route,
      kind: 'status',
      status: 502,
      afterProcessing: true,
      probability: 0.03,
    })),
  ];
}
