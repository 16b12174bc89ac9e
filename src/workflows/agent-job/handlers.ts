import { ApplicationFailure, currentUpdateInfo, log, setHandler } from '@temporalio/workflow';
import type { AgentJob, FollowUpRequest } from '../../contract/agent-job';
import { FollowUpFailureType, MAX_MESSAGE_ID_CHARS } from '../../contract/agent-job-constants';
import { followUpRequestIssues } from '../../contract/follow-up-checks';
import { InputValidationError } from '../../contract/input-error';
import {
  followUpSignal,
  getSentFollowUpsQuery,
  getStateQuery,
  sendFollowUpUpdate,
} from '../../contract/messages';
import { refusesFollowUps, statusOf, toAgentJobState, type RunState } from './state';
import { recordFollowUpNotAccepted } from '../metrics';
import { refreshVisibility } from './visibility';

/** Registers the query, signal and update; called before the workflow's first await (signal-with-start). */
export function registerHandlers(state: RunState): void {
  setHandler(getStateQuery, () => toAgentJobState(state));
  setHandler(getSentFollowUpsQuery, () => state.followUps.sent());
  setHandler(followUpSignal, (request) => acceptSignal(state, request));
  setHandler(sendFollowUpUpdate, (request) => sendAndWait(state, request), {
    validator: (request) => validateUpdate(state, request),
  });
}

/** A signal cannot be turned back to its sender, so one not accepted is recorded as rejected (visible in getState). */
function acceptSignal(state: RunState, raw: unknown): void {
  const givenId = messageIdOf(raw);
  if (givenId !== undefined && state.followUps.statusOf(givenId) !== undefined) {
    log.info('Duplicate follow-up ignored', { messageId: givenId });
    return;
  }
  const messageId = givenId ?? state.followUps.nextUnnamedId();
  const prompt = promptOf(raw);
  const notAccepted = whyNotAccepted(state, raw);
  if (notAccepted !== undefined) {
    log.warn('Follow-up signal not accepted', { messageId, reason: notAccepted.reason });
    state.followUps.recordNotAccepted(messageId, prompt, notAccepted.reason);
    state.notAccepted += 1;
    recordFollowUpNotAccepted(state.projectId);
  } else {
    state.followUps.enqueue(messageId, prompt);
    state.arrivals += 1;
  }
  refreshVisibility(state);
}

/** Runs before the update enters history: an update not accepted sends nothing and leaves no trace. */
function validateUpdate(state: RunState, raw: unknown): void {
  const notAccepted = whyNotAccepted(state, raw);
  if (notAccepted !== undefined) throw ApplicationFailure.nonRetryable(notAccepted.reason, notAccepted.type);
}

async function sendAndWait(state: RunState, request: FollowUpRequest): Promise<AgentJob> {
  const messageId =
    request.messageId ?? `update-${currentUpdateInfo()?.id ?? state.followUps.nextUnnamedId()}`;
  const answer = new Promise<AgentJob>((resolve, reject) => {
    state.followUps.enqueue(messageId, request.prompt, {
      delivered: resolve,
      failed: (status, reason) => reject(followUpFailure(messageId, status, reason)),
    });
  });
  state.arrivals += 1;
  refreshVisibility(state);
  return answer;
}

interface NotAccepted {
  type: typeof FollowUpFailureType.invalidInput | typeof FollowUpFailureType.notAccepted;
  reason: string;
}

/** Why a follow-up cannot be queued, or undefined when it can. */
function whyNotAccepted(state: RunState, raw: unknown): NotAccepted | undefined {
  const issues = followUpRequestIssues(raw, 'follow-up');
  if (issues.length > 0) {
    return {
      type: FollowUpFailureType.invalidInput,
      reason: new InputValidationError(issues, 'follow-up').message,
    };
  }
  const notAccepted = (reason: string): NotAccepted => ({ type: FollowUpFailureType.notAccepted, reason });
  const messageId = messageIdOf(raw);
  const seen = messageId === undefined ? undefined : state.followUps.statusOf(messageId);
  if (seen !== undefined) return notAccepted(`follow-up ${messageId} was already received (status: ${seen})`);
  if (state.closingReason !== null) return notAccepted(`the workflow is ending (${state.closingReason})`);
  const status = statusOf(state);
  if (refusesFollowUps(status)) return notAccepted(`job ${state.jobId} is ${status}: it takes no follow-ups`);
  const refusal = state.followUps.refusal(state.jobId);
  return refusal === undefined ? undefined : notAccepted(refusal);
}

function followUpFailure(messageId: string, status: string, reason: string): ApplicationFailure {
  const type =
    status === 'rejected'
      ? FollowUpFailureType.rejected
      : status === 'outcome_unknown'
        ? FollowUpFailureType.outcomeUnknown
        : FollowUpFailureType.notSent;
  return ApplicationFailure.create({
    type,
    message: `follow-up ${messageId}: ${reason}`,
    nonRetryable: true,
    details: [{ messageId, status, reason }],
  });
}

function messageIdOf(raw: unknown): string | undefined {
  const value = isRecord(raw) ? raw.messageId : undefined;
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_MESSAGE_ID_CHARS
    ? value
    : undefined;
}

function promptOf(raw: unknown): string {
  const value = isRecord(raw) ? raw.prompt : undefined;
  return typeof value === 'string' ? value : '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
