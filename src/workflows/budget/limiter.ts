import {
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  setCurrentDetails,
  setHandler,
  workflowInfo,
  type SignalDefinition,
} from '@temporalio/workflow';
import {
  budgetLimiterSummary,
  budgetPermitGrantedSignal,
  budgetPermitQueuedSignal,
  getBudgetStateQuery,
  MAX_PERMITS_PER_ASK,
  releaseBudgetPermitsSignal,
  requestBudgetPermitSignal,
  type PermitAsk,
  type RateBudget,
} from '../../contract/budget';
import {
  CONTINUE_AS_NEW_AFTER_EVENTS,
  continueAsNewDue,
  continueAsNewOnCurrentVersion,
  newVersionTargeted,
  withVersionCheck,
} from '../continue-as-new';
import { BudgetLedger, type LedgerSnapshot } from './ledger';
import { clockTime } from './permits';

export interface BudgetLimiterInput {
  budget: RateBudget;
  /** Set by continue-as-new. */
  ledger?: LedgerSnapshot;
  /** Continue as new after this many events (tests lower it). */
  continueAsNewAfterEvents?: number;
}

/** An ask expected to be granted sooner than this gets no estimate: it is for operators watching a long wait. */
const QUEUED_NOTICE_MIN_WAIT_MS = 2_000;
/** Queued requesters named in the current details; the rest are counted. */
const REQUESTERS_NAMED = 5;

/**
 * One budget of the service, shared by every workflow and worker process that spends it. Requesters ask by
 * signal-with-start; the limiter signals the grant to the run that asked when the budget allows (and, to an ask
 * that must wait long, an estimate first), round robin across projects and FIFO within one. It never ends: it
 * continues as new, onto the current Worker Deployment Version, also soon after a new one becomes current.
 */
export async function docsBudgetLimiter(input: BudgetLimiterInput): Promise<void> {
  const ledger = new BudgetLedger(input.budget, input.ledger);
  let changes = 0;
  let signalsInFlight = 0;

  /** Signals the run that asked; when it has closed (even if replaced under its workflow id), its permit is freed. */
  const send = <A>(ask: PermitAsk, signal: SignalDefinition<[A]>, arg: A): void => {
    signalsInFlight += 1;
    getExternalWorkflowHandle(ask.requesterId, ask.requesterRunId)
      .signal(signal, arg)
      .catch((error: unknown) => {
        log.info('Permit message not delivered: the requester has ended', {
          requesterId: ask.requesterId,
          requesterRunId: ask.requesterRunId,
          error: error instanceof Error ? error.message : String(error),
        });
        ledger.release({ permitId: ask.permitId, unused: MAX_PERMITS_PER_ASK }, Date.now());
        changes += 1;
      })
      .finally(() => {
        signalsInFlight -= 1;
      });
  };

  setHandler(requestBudgetPermitSignal, (ask) => {
    if (invalidAsk(ask)) {
      const rule = `a budget, permitId, requesterId, requesterRunId, projectId, a count from 1 to ${MAX_PERMITS_PER_ASK}`;
      return log.warn(`Permit ask ignored: it must have ${rule}`, { requesterId: ask.requesterId });
    }
    const estimatedGrantAt = ledger.enqueue(ask, Date.now()) ?? 0;
    // An ask granted soon hears nothing before its grant (which costs the requester fewer events).
    if (estimatedGrantAt - Date.now() >= QUEUED_NOTICE_MIN_WAIT_MS) {
      send(ask, budgetPermitQueuedSignal, { permitId: ask.permitId, estimatedGrantAt });
    }
    changes += 1;
  });
  setHandler(releaseBudgetPermitsSignal, (release) => {
    ledger.release(release, Date.now());
    changes += 1;
  });
  setHandler(getBudgetStateQuery, () => ledger.view(Date.now()));

  const eventLimit = input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS.budgetLimiter;
  const continueAsNewNow = () => continueAsNewDue(eventLimit) || newVersionTargeted();
  for (;;) {
    const now = Date.now();
    for (let next = ledger.grant(now); next; next = ledger.grant(now)) {
      send(next.ask, budgetPermitGrantedSignal, next.grant);
    }
    setCurrentDetails(details(ledger, now));
    if (continueAsNewNow()) {
      await condition(() => signalsInFlight === 0 && allHandlersFinished());
      return continueAsNewOnCurrentVersion<typeof docsBudgetLimiter>({ ...input, ledger: ledger.snapshot() });
    }
    const seen = changes;
    const wakeAt = ledger.wakeAt(now);
    // The answers to its own signals lengthen the history too: they may make continue-as-new due.
    const woken = () => changes !== seen || continueAsNewNow();
    const timeoutMs = withVersionCheck(wakeAt === undefined ? undefined : Math.max(1, wakeAt - now));
    if (timeoutMs === undefined) await condition(woken);
    else await condition(woken, timeoutMs);
  }
}

/** The limiter's current details in the UI: its budget and limit, what the window holds, who waits, a pause. */
function details(ledger: BudgetLedger, now: number): string {
  const view = ledger.view(now);
  const requesters = ledger.queuedRequesters();
  const more =
    requesters.length > REQUESTERS_NAMED ? ` and ${requesters.length - REQUESTERS_NAMED} more` : '';
  const byProject = Object.entries(view.waitingByProject).map(([project, count]) => `${project} ${count}`);
  return [
    budgetLimiterSummary(workflowInfo().workflowId, view.budget),
    `**Used in the window:** ${view.grantedInWindow} of ${view.budget.requests} · **Granted:** ${view.granted} · **Refused (429):** ${view.refusals} · as of ${clockTime(now)}`,
    byProject.length === 0
      ? '**Queued:** none'
      : `**Queued:** ${ledger.waiting} permits (by project: ${byProject.join(', ')}) · **Requesters:** ${requesters.slice(0, REQUESTERS_NAMED).join(', ')}${more}`,
    ...(view.pausedUntil === null
      ? []
      : [`**Paused until** ${clockTime(view.pausedUntil)}: the service refused a request (429)`]),
  ].join('\n');
}

/** An ask the ledger cannot serve (a signal sent by hand): ignored, with a warning. */
function invalidAsk({ budget, count = 1, ...ask }: PermitAsk): boolean {
  const ids = [ask.permitId, ask.requesterId, ask.requesterRunId, ask.projectId];
  const whole = (n: number, max = Infinity) => Number.isInteger(n) && n >= 1 && n <= max;
  return !(
    whole(budget?.requests) &&
    budget.windowMs >= 1 &&
    whole(count, MAX_PERMITS_PER_ASK) &&
    ids.every(Boolean)
  );
}
