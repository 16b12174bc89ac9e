import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  currentUpdateInfo,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  AgentJob,
  AgentJobCreateRecord,
  AgentJobInput,
  AgentJobResult,
  FollowUpRequest,
} from '../../contract/agent-job';
import {
  AgentJobFailureType,
  FollowUpFailureType,
  followUpRequestIssues,
  refusesFollowUps,
} from '../../contract/agent-job-constants';
import { InputValidationError, type InputIssue } from '../../contract/failure-types';
import {
  followUpSignal,
  getSentFollowUpsQuery,
  getStateQuery,
  sendFollowUpUpdate,
} from '../../contract/messages';
import { agentJobWorkflowIdIssue } from '../../contract/names';
import { BudgetPermits } from '../budget/permits';
import { CONTINUE_AS_NEW_AFTER_EVENTS, continueAsNewDue } from '../continue-as-new';
import { invalidInputOf } from '../input-check';
import { recordFollowUpNotAccepted } from '../metrics';
import { attemptCreate, deliverNextFollowUp, jobFailed, readJob, startPoll, timedOut } from './calls';
import {
  initialState,
  isRead,
  isFinished,
  needsPolling,
  refreshVisibility,
  statusOf,
  toAgentJobState,
  toContinuation,
  toResult,
  type RunState,
} from './state';

/**
 * Creates a documentation-service agent job once, polls it to a terminal status, delivers follow-ups in order,
 * and returns the contract's result (a `failed` job fails the workflow, typed). Design: docs/agent-job.md.
 */
export async function agentJob(input: AgentJobInput): Promise<AgentJobResult> {
  // Handlers are registered before the first await (signal-with-start); input that builds no state fails the
  // check just below. From here on, however the run ends, every update it accepted is answered.
  let state: RunState | undefined;
  try {
    state = initialState(input, Date.now());
    registerHandlers(state);
  } catch {
    state = undefined;
  }
  try {
    await failOnBadInput(input);
    const run = state as RunState;
    run.budget = new BudgetPermits('agent', run, () => refreshVisibility(run));
    refreshVisibility(run);
    return await runUntilDone(run);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    if (state) await closeFollowUps(state, error);
    throw error;
  }
}

/**
 * The record of a job's create (client/agent-job-runs.ts): it completes at once with the record as its result,
 * which Temporal keeps for the namespace's retention whatever happens to the job's own runs.
 */
export function agentJobCreateRecord(record: AgentJobCreateRecord): Promise<AgentJobCreateRecord> {
  return Promise.resolve(record);
}

/** Bad input (or a workflow id reserved for create records) fails the run before any call, naming the field. */
async function failOnBadInput(input: unknown): Promise<void> {
  const idIssue = agentJobWorkflowIdIssue(workflowInfo().workflowId);
  const issues = idIssue === undefined ? undefined : [{ field: 'workflowId', rule: idIssue }];
  const refusal = issues
    ? { message: new InputValidationError(issues, 'agentJob input').message, issues }
    : await invalidInputOf('agentJob', input);
  if (refusal === null) return;
  throw ApplicationFailure.create({
    type: AgentJobFailureType.invalidInput,
    message: refusal.message,
    nonRetryable: true,
    details: [{ issues: refusal.issues }],
  });
}

/**
 * The one loop: create the job, send the next follow-up, keep one poll activity running while the job needs
 * reading, or wait for a follow-up, the poll's end, a re-send time or the deadline. Follow-ups go out one at a
 * time, in order, while the poll activity keeps running.
 */
async function runUntilDone(state: RunState): Promise<AgentJobResult> {
  const eventLimit = state.input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS.agentJob;
  for (;;) {
    if (state.pollFailure) throw state.pollFailure;
    if (isFinished(state)) {
      // Update handlers settle with their follow-up; let them return their answers before closing.
      await condition(() => allHandlersFinished() || state.followUps.pendingCount > 0);
      if (state.followUps.pendingCount === 0) {
        const job = state.job as AgentJob;
        refreshVisibility(state);
        if (job.status === 'failed') throw jobFailed(state, job);
        return toResult(state, job);
      }
    }
    const now = Date.now();
    // While the poll activity runs, its own timeout ends it at the deadline, naming the last service error.
    if (now >= state.deadlineAt && state.poll === null) throw timedOut(state);
    if (continueAsNewDue(eventLimit) && allHandlersFinished()) await continueAsNew(state);

    const pending = state.followUps.pendingCount > 0;
    if (state.jobId === null) {
      if (now >= state.resendAt) {
        await attemptCreate(state);
        continue;
      }
    } else if (pending && refusesFollowUps(statusOf(state))) {
      state.followUps.rejectAll(`not sent: job ${state.jobId} is ${statusOf(state)}`);
      continue;
    } else if (pending && state.readBeforeNextMessage) {
      await readJob(state, null);
      state.readBeforeNextMessage = false;
      continue;
    } else if (pending && isRead(state) && now >= state.resendAt) {
      await deliverNextFollowUp(state);
      continue;
    }
    if (state.poll === null && needsPolling(state)) startPoll(state);
    const wakeAt = Math.min(
      state.poll === null ? state.deadlineAt : Infinity,
      state.jobId === null || pending ? state.resendAt : Infinity,
    );
    const { poll } = state;
    const queued = state.followUps.pendingCount;
    refreshVisibility(state);
    await condition(
      () => state.followUps.pendingCount !== queued || state.poll !== poll,
      wakeAt === Infinity ? undefined : Math.max(1, wakeAt - Date.now()),
      {
        summary: state.jobId === null ? 'Wait to send the create again' : 'Wait for a follow-up or the poll',
      },
    );
  }
}

async function continueAsNew(state: RunState): Promise<never> {
  const info = workflowInfo();
  log.info('Continuing as new to keep the history bounded', {
    historyLength: info.historyLength,
    pendingFollowUps: state.followUps.pendingCount,
  });
  const next: AgentJobInput = {
    ...state.input,
    ...(state.jobId === null ? {} : { jobId: state.jobId }),
    continuation: toContinuation(state),
  };
  // Search attributes hold the job id and status the next run starts from.
  return makeContinueAsNewFunc<(input: AgentJobInput) => Promise<AgentJobResult>>({
    typedSearchAttributes: info.typedSearchAttributes,
  })(next);
}

/**
 * The run ends in failure or cancellation: waiting updates fail with FollowUpNotSent (queued signals stay listed
 * as pending, never sent), and the state says the service job may still run (the service has no cancel).
 */
async function closeFollowUps(state: RunState, error: unknown): Promise<void> {
  const cancelled = isCancellation(error);
  state.closingReason = cancelled ? 'workflow cancelled' : 'workflow failed';
  if (cancelled) {
    state.lastError =
      state.jobId === null
        ? 'workflow cancelled before the job was created'
        : `workflow cancelled: polling stopped, but the service job ${state.jobId} may still run (the service has no cancel operation)`;
    log.warn('Agent job workflow cancelled; the service job may still run', { jobId: state.jobId });
  }
  state.followUps.abandon(`not sent: ${state.closingReason}`);
  refreshVisibility(state);
  await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
}

function registerHandlers(state: RunState): void {
  setHandler(getStateQuery, () => toAgentJobState(state));
  setHandler(getSentFollowUpsQuery, () => ({
    ...state.followUps.sent(),
    ...(state.earlierUnread ? { earlierUnread: true as const } : {}),
  }));
  setHandler(followUpSignal, (request) => acceptSignal(state, request));
  setHandler(sendFollowUpUpdate, (request) => sendAndWait(state, request), {
    // Runs before the update enters history: an update not accepted sends nothing and leaves no trace.
    validator: (request) => {
      const notAccepted = whyNotAccepted(state, request);
      if (notAccepted) throw ApplicationFailure.nonRetryable(notAccepted.reason, notAccepted.type);
    },
  });
}

/** A signal cannot be turned back to its sender, so one not accepted is recorded as rejected (visible in getState). */
function acceptSignal(state: RunState, raw: unknown): void {
  const fields = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<Record<string, unknown>>;
  const notAccepted = whyNotAccepted(state, raw);
  const badId = notAccepted?.issues?.some((issue) => issue.field === 'messageId');
  const givenId = badId ? undefined : fields.messageId;
  if (typeof givenId === 'string' && state.followUps.statusOf(givenId) !== undefined) {
    log.info('Duplicate follow-up ignored', { messageId: givenId });
    return;
  }
  const prompt = typeof fields.prompt === 'string' ? fields.prompt : '';
  if (notAccepted !== undefined) {
    const messageId = typeof givenId === 'string' ? givenId : state.followUps.nextUnnamedId();
    log.warn('Follow-up signal not accepted', { messageId, reason: notAccepted.reason });
    state.followUps.recordNotAccepted(messageId, prompt, notAccepted.reason);
    state.notAccepted += 1;
    recordFollowUpNotAccepted(state.projectId);
  } else if (typeof givenId === 'string') {
    state.followUps.enqueue(givenId, prompt);
  } else {
    state.followUps.enqueueUnnamed(prompt);
  }
  refreshVisibility(state);
}

const FAILURE_TYPE_OF = {
  rejected: FollowUpFailureType.rejected,
  outcome_unknown: FollowUpFailureType.outcomeUnknown,
  not_sent: FollowUpFailureType.notSent,
} as const;

async function sendAndWait(state: RunState, request: FollowUpRequest): Promise<AgentJob> {
  const messageId =
    request.messageId ?? `update-${currentUpdateInfo()?.id ?? state.followUps.nextUnnamedId()}`;
  const answer = new Promise<AgentJob>((resolve, reject) => {
    state.followUps.enqueue(messageId, request.prompt, {
      delivered: resolve,
      failed: (status, reason) => {
        const type = FAILURE_TYPE_OF[status];
        const message = `follow-up ${messageId}: ${reason}`;
        const details = [{ messageId, status, reason }];
        reject(ApplicationFailure.create({ type, message, nonRetryable: true, details }));
      },
    });
  });
  refreshVisibility(state);
  return answer;
}

/** Why a follow-up is not queued: the request breaks rules (`issues`), or the job takes none now. */
function whyNotAccepted(
  state: RunState,
  raw: unknown,
): { type: string; reason: string; issues?: InputIssue[] } | undefined {
  const issues = followUpRequestIssues(raw, 'follow-up');
  if (issues.length > 0) {
    const reason = new InputValidationError(issues, 'follow-up').message;
    return { type: FollowUpFailureType.invalidInput, reason, issues };
  }
  const { messageId } = raw as FollowUpRequest;
  const seen = messageId === undefined ? undefined : state.followUps.statusOf(messageId);
  const status = statusOf(state);
  const reason =
    seen !== undefined
      ? `follow-up ${messageId} was already received (status: ${seen})`
      : state.closingReason !== null
        ? `the workflow is ending (${state.closingReason})`
        : refusesFollowUps(status)
          ? `job ${state.jobId} is ${status}: it takes no follow-ups`
          : state.followUps.refusal(state.jobId);
  return reason === undefined ? undefined : { type: FollowUpFailureType.notAccepted, reason };
}
