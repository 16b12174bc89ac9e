import { INVALID_INPUT_FAILURE_TYPE } from './input-error';

// The agent job's names and constants, free of zod: workflow code imports values only from here (and types
// from ./agent-job with `import type`), so that zod is never evaluated in the workflow sandbox, where every
// module is evaluated again for each workflow (docs/agent-job.md, "Validation and the sandbox").

/** Upper bound that keeps every prompt far below Temporal's 2 MB payload limit, also once carried in state. */
export const MAX_PROMPT_CHARS = 32_000;
/**
 * The prompt's text rule, declared once for the zod schema and the sandbox's hand-written checks. The service asks
 * only for a minimum length of 1; the project also refuses a prompt of nothing but whitespace.
 */
export const PROMPT_TEXT_RULES = {
  empty: 'must not be empty',
  blank:
    "must contain a non-whitespace character (this project's rule; the service accepts any non-empty text)",
} as const;

/** The rule a prompt's text breaks (empty, or only whitespace), or undefined when it has some text. */
export function promptTextIssue(prompt: string): string | undefined {
  if (prompt.length === 0) return PROMPT_TEXT_RULES.empty;
  return prompt.trim().length === 0 ? PROMPT_TEXT_RULES.blank : undefined;
}

/** A follow-up's messageId (its deduplication key) is at most this long. */
export const MAX_MESSAGE_ID_CHARS = 200;

export const TERMINAL_JOB_STATUSES = ['completed', 'archived', 'failed'] as const;
export const KNOWN_JOB_STATUSES = ['active', ...TERMINAL_JOB_STATUSES] as const;
/** The status shown (getState, AgentJobStatus) before the service has answered the create. */
export const STATUS_NOT_CREATED = 'creating';
/**
 * The status held for a job known by its id whose status was not read yet (a malformed create answer that named
 * it, a create answered from its record): read at once.
 */
export const STATUS_UNREAD = 'unread';
/** The status a run ends with when get-job answered 404 (AgentJobNotFound): no such job at the service. */
export const STATUS_NOT_FOUND = 'not_found';
/** Statuses whose job refuses follow-ups: the workflow does not send them (the update validator rejects). */
export const FOLLOW_UP_REFUSING_STATUSES = ['failed', 'archived', STATUS_NOT_FOUND] as const;

/** Suited to jobs of minutes to hours: 5 s, 10 s, 20 s, 40 s, 80 s, then every 2 min, for at most 24 h. */
export const DEFAULT_POLLING = {
  initialInterval: '5s',
  maxInterval: '2m',
  backoffCoefficient: 2,
  deadline: '24h',
} as const satisfies Record<'initialInterval' | 'maxInterval' | 'deadline', string> & {
  backoffCoefficient: number;
};

/** Each poll interval is shortened by up to this fraction, deterministically (see docs/agent-job.md). */
export const POLL_JITTER_RATIO = 0.1;

/** Bounds that keep the workflow state (carried across continue-as-new) far below Temporal's payload limits. */
export const FOLLOW_UP_LIMITS = {
  /** Follow-ups queued and not yet sent; more are refused. */
  maxPending: 20,
  /** Settled follow-ups listed in state and result; older ones are counted, not listed (display only). */
  maxRecords: 500,
  /**
   * Follow-ups one job takes in its whole life: sent (or being sent) and waiting. Their messageIds are never
   * forgotten (SentFollowUpLedger); one refused or never sent takes no place. Past it, follow-ups are refused.
   */
  maxPerJob: 10_000,
  /** A settled follow-up keeps this many characters of its prompt. */
  recordPromptChars: 500,
} as const;

/** ApplicationFailure types the agentJob workflow fails with; details[0] carries the data. */
export const AgentJobFailureType = {
  /** The job ended `failed`; details[0] is the AgentJobResult. */
  jobFailed: 'AgentJobFailed',
  /** The deadline passed first; details[0] is the AgentJobState (the service job may still run). */
  timedOut: 'AgentJobTimedOut',
  /** The create may or may not have reached the service; it is never re-sent. details[0]: AgentJobState. */
  createOutcomeUnknown: 'AgentJobCreateOutcomeUnknown',
  /**
   * The workflow id already created a job for another prompt, or sent a create whose outcome is unknown: nothing
   * was sent. details[0]: the earlier job (`jobId`, `status`, `prLink` when known, `createdByRunId`, `recordedAt`).
   */
  keyInUse: 'AgentJobKeyInUse',
  /** The service refused the create (4xx); no job exists. details[0]: AgentJobState. */
  createRejected: 'AgentJobCreateRejected',
  /** Get-job answered 404. details[0]: AgentJobState. */
  jobNotFound: 'AgentJobNotFound',
  /** Get-job was refused for another reason (401, 403, 400...). details[0]: AgentJobState. */
  pollRejected: 'AgentJobPollRejected',
  invalidInput: INVALID_INPUT_FAILURE_TYPE,
} as const;

export type AgentJobFailureTypeName = (typeof AgentJobFailureType)[keyof typeof AgentJobFailureType];

/**
 * Failures of the agent job activities that the workflow handles itself. `stillRunning`: the poll activity's
 * failure while the job runs, benign (not logged as an error), retried after the next poll interval; the workflow
 * never sees it unless the activity's retries end.
 */
export const AgentJobActivityFailureType = {
  stillRunning: 'AgentJobStillRunning',
  /** The create activity could not read its workflow id's create record: nothing was sent (safe to send again). */
  createRecordUnreadable: 'CreateRecordUnreadable',
} as const;

/**
 * What the poll activity's last attempt tells (its ApplicationFailure: still running, or a service error): the
 * live status, the reads so far and the last service error. The still-running failure carries them in
 * details[0], a service error's failure in details[1] (details[0] is the HTTP client's).
 */
export function pollProgressOf(failure: {
  type?: string | null | undefined;
  message: string;
  details?: unknown[] | null | undefined;
}): {
  status?: string;
  polls: number;
  lastError?: string;
} {
  const stillRunning = failure.type === AgentJobActivityFailureType.stillRunning;
  const raw = (failure.details?.[stillRunning ? 0 : 1] ?? {}) as Record<string, unknown>;
  const lastError = stillRunning ? raw.lastError : failure.message;
  return {
    ...(typeof raw.status === 'string' ? { status: raw.status } : {}),
    polls: typeof raw.polls === 'number' ? raw.polls : 0,
    ...(typeof lastError === 'string' ? { lastError } : {}),
  };
}

/** ApplicationFailure types a `sendFollowUp` update fails with (the workflow itself goes on). */
export const FollowUpFailureType = {
  /** Refused by the workflow before anything was sent: bad input, duplicate messageId, job failed or archived. */
  notAccepted: 'FollowUpNotAccepted',
  invalidInput: INVALID_INPUT_FAILURE_TYPE,
  /** The service refused the message (4xx). */
  rejected: 'FollowUpRejected',
  /** The message may or may not have reached the service; it is not re-sent. */
  outcomeUnknown: 'FollowUpOutcomeUnknown',
  /** The workflow ended (job failed, deadline, cancellation) before the message could be sent. */
  notSent: 'FollowUpNotSent',
} as const;

export type FollowUpFailureTypeName = (typeof FollowUpFailureType)[keyof typeof FollowUpFailureType];

export const MIN_POLL_INTERVAL_MS = 100;

/** pending: queued in the workflow; delivered: the service accepted it; rejected: the service refused it (4xx);
 * outcome_unknown: the request may or may not have reached the service (never silently re-sent). */
export const FOLLOW_UP_STATUSES = ['pending', 'delivered', 'rejected', 'outcome_unknown'] as const;
export type FollowUpStatus = (typeof FOLLOW_UP_STATUSES)[number];
