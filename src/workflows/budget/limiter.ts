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
  releaseBudgetPermitsSignal,
  requestBudgetPermitSignal,
  type PermitGrant,
  type PermitRequest,
  type PermitTicket,
  type RateBudget,
} from '../../contract/budget';
import { CONTINUE_AS_NEW_AFTER_EVENTS } from '../../contract/continue-as-new';
import { continueAsNewOnCurrentVersion, newVersionTargeted, withVersionCheck } from '../versioning';
import { BudgetLedger } from './ledger';
import type { LedgerSnapshot } from './ledger-snapshot';
import { clockTime } from './permits';

export interface BudgetLimiterInput {
  budget: RateBudget;
  /** Set by continue-as-new. */
  ledger?: LedgerSnapshot;
  /** Continue as new after this many events (tests lower it). */
  continueAsNewAfterEvents?: number;
}

/** A permit expected to be granted sooner than this gets no "queued" estimate. */
const QUEUED_NOTICE_MIN_WAIT_MS = 2_000;

/**
 * One budget of the service, shared by every workflow and worker process that spends it. Requesters ask by
 * signal-with-start; the limiter signals the grant when the budget allows (and, to a permit that must wait, an
 * estimate first), round robin across projects and FIFO within one. It never ends: it continues as new, onto
 * the current Worker Deployment Version, also soon after a new one becomes current.
 */
export async function docsBudgetLimiter(input: BudgetLimiterInput): Promise<void> {
  const ledger = new BudgetLedger(input.budget, input.ledger);
  let changes = 0;
  let signalsInFlight = 0;

  const tickets: PermitTicket[] = [];
  setHandler(requestBudgetPermitSignal, (request) => {
    const problem = invalidRequest(request);
    if (problem !== undefined) {
      log.warn('Permit request ignored', { problem, requesterId: request.requesterId });
      return;
    }
    const ticket = ledger.enqueue(request, Date.now());
    if (ticket) tickets.push(ticket);
    changes += 1;
  });
  setHandler(releaseBudgetPermitsSignal, (release) => {
    changes += 1;
    if (release.permitId !== undefined) ledger.release(release.permitId, Date.now());
    if (release.unspent !== undefined) ledger.releaseUnspent(release);
  });
  setHandler(getBudgetStateQuery, () => ledger.view(Date.now()));

  /** Signals the run that asked; a closed run (even one replaced under the same workflow id) is gone. */
  const send = <A>(
    request: Pick<PermitRequest, 'requesterId' | 'requesterRunId'>,
    signal: SignalDefinition<[A]>,
    arg: A,
    onGone: () => void,
  ): void => {
    signalsInFlight += 1;
    getExternalWorkflowHandle(request.requesterId, request.requesterRunId)
      .signal(signal, arg)
      .catch((error: unknown) => {
        // The requester has ended (cancelled, failed, terminated): nobody will spend this permit.
        log.info('Permit message not delivered: the requester has ended', {
          requesterId: request.requesterId,
          requesterRunId: request.requesterRunId,
          error: error instanceof Error ? error.message : String(error),
        });
        onGone();
        changes += 1;
      })
      .finally(() => {
        signalsInFlight -= 1;
      });
  };
  const grant = (request: PermitRequest, grantedAt: number): void => {
    // A requester that asks with a count (an export's pages) may take more from the spare, and hears the spare.
    const count = request.count === undefined ? 1 : 1 + ledger.grantExtras(request, grantedAt);
    const batch: Partial<PermitGrant> =
      request.count === undefined
        ? {}
        : { count, spare: ledger.spare(grantedAt), spendBy: grantedAt + ledger.spendWithinMs };
    send(request, budgetPermitGrantedSignal, { permitId: request.permitId, grantedAt, ...batch }, () =>
      ledger.forget(request.permitId, grantedAt, count),
    );
  };
  const queued = (ticket: PermitTicket): void => {
    const request = ledger.requestOf(ticket.permitId);
    // Granted in the same task already: the grant says it all. A short wait is not worth a message (and the
    // requester's history four events): the estimate is for operators watching a long one.
    if (request === undefined || ticket.estimatedGrantAt - Date.now() < QUEUED_NOTICE_MIN_WAIT_MS) return;
    send(request, budgetPermitQueuedSignal, ticket, () => ledger.cancel(ticket.permitId));
  };

  const eventLimit = input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS.budgetLimiter;
  for (;;) {
    const now = Date.now();
    for (let next = ledger.grant(now); next; next = ledger.grant(now)) grant(next, now);
    for (const ticket of tickets.splice(0)) queued(ticket);
    setCurrentDetails(details(ledger, now));
    if (continueAsNewDue(eventLimit) || newVersionTargeted()) {
      await condition(() => signalsInFlight === 0 && allHandlersFinished());
      return continueAsNewOnCurrentVersion<typeof docsBudgetLimiter>({ ...input, ledger: ledger.snapshot() });
    }
    const seen = changes;
    const wakeAt = ledger.wakeAt(now);
    // The answers to its own signals lengthen the history too: they may make continue-as-new due.
    const woken = () => changes !== seen || continueAsNewDue(eventLimit) || newVersionTargeted();
    const timeoutMs = withVersionCheck(wakeAt === undefined ? undefined : Math.max(1, wakeAt - now));
    if (timeoutMs === undefined) await condition(woken);
    else await condition(woken, timeoutMs);
  }
}

/** Queued requesters named in the details; the rest are counted. */
const REQUESTERS_NAMED = 5;

/** The limiter's current details in the UI: its budget and limit, what the window holds, who waits, a pause. */
function details(ledger: BudgetLedger, now: number): string {
  const view = ledger.view(now);
  const projects = Object.entries(view.waitingByProject);
  const requesters = ledger.queuedRequesters();
  const lines = [
    budgetLimiterSummary(workflowInfo().workflowId, view.budget),
    `**Used in the window:** ${view.grantedInWindow} of ${view.budget.requests} · **Granted:** ${view.granted} · **Refused (429):** ${view.refusals} · as of ${clockTime(now)}`,
  ];
  if (projects.length === 0) lines.push('**Queued:** none');
  else {
    const more =
      requesters.length > REQUESTERS_NAMED ? ` and ${requesters.length - REQUESTERS_NAMED} more` : '';
    const byProject = projects.map(([project, count]) => `${project} ${count}`).join(', ');
    lines.push(
      `**Queued:** ${ledger.waiting} permits (by project: ${byProject}) · **Requesters:** ${requesters.slice(0, REQUESTERS_NAMED).join(', ')}${more}`,
    );
  }
  if (view.pausedUntil !== null) {
    lines.push(`**Paused until** ${clockTime(view.pausedUntil)}: the service refused a request (429)`);
  }
  return lines.join('\n');
}

function continueAsNewDue(eventLimit: number): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= eventLimit;
}

function invalidRequest(request: PermitRequest): string | undefined {
  const budget = request.budget as Partial<RateBudget> | undefined;
  if (!(Number.isInteger(budget?.requests) && (budget?.requests ?? 0) > 0 && (budget?.windowMs ?? 0) > 0)) {
    return 'budget must have requests > 0 and windowMs > 0';
  }
  if (!request.permitId || !request.requesterId || !request.projectId) {
    return 'permitId, requesterId and projectId are required';
  }
  if (request.count !== undefined && !(Number.isInteger(request.count) && request.count >= 1)) {
    return 'count must be a whole number >= 1';
  }
  return undefined;
}
