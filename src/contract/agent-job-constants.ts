import type { ApplicationFailure } from '@temporalio/common';
import {
  docsApiDetailsOf,
  INVALID_INPUT_FAILURE_TYPE,
  type DocsApiFailureDetails,
  type InputIssue,
} from './failure-types';

// The agent job's names, constants and checks, free of zod: workflow code imports values only from here (and types
// from ./agent-job with `import type`), so that zod is never evaluated in the workflow sandbox, where every
// module is evaluated again for each workflow (docs/agent-job.md, "Validation and the sandbox").

/** Upper bound that keeps every prompt far below Temporal's 2 MB payload limit, also once carried in state. */
export const MAX_PROMPT_CHARS = 32_000;
/** The service asks only for a minimum length of 1; the project also refuses a prompt of only whitespace. */
export const PROMPT_TEXT_RULES = {
  empty: 'must not be empty',
  blank:
    "must contain a non-whitespace character (this project's rule; the service accepts any non-empty text)",
} as const;

export function promptTextIssue(prompt: string): string | undefined {
  if (prompt.length === 0) return PROMPT_TEXT_RULES.empty;
  return prompt.trim().length === 0 ? PROMPT_TEXT_RULES.blank : undefined;
}

export const MAX_MESSAGE_ID_CHARS = 200;
export const MIN_POLL_INTERVAL_MS = 100;

export const TERMINAL_JOB_STATUSES = ['completed', 'archived', 'failed'] as const;
export const KNOWN_JOB_STATUSES = ['active', ...TERMINAL_JOB_STATUSES] as const;
/** The status shown (getState, AgentJobStatus) before the service has answered the create. */
export const STATUS_NOT_CREATED = 'creating';
/** A job known by its id whose status was not read yet (a malformed create answer, a create record): read at once. */
export const STATUS_UNREAD = 'unread';
/** The status a run ends with when get-job answered 404 (AgentJobNotFound). */
export const STATUS_NOT_FOUND = 'not_found';
/** Statuses whose job refuses follow-ups: the workflow does not send them. */
export const FOLLOW_UP_REFUSING_STATUSES = ['failed', 'archived', STATUS_NOT_FOUND] as const;

export function isTerminal(status: string): boolean {
  return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

export function refusesFollowUps(status: string): boolean {
  return (FOLLOW_UP_REFUSING_STATUSES as readonly string[]).includes(status);
}

/** Suited to jobs of minutes to hours: 5 s, 10 s, 20 s, 40 s, 80 s, then every 2 min, for at most 24 h. */
export const DEFAULT_POLLING = {
  initialInterval: '5s',
  maxInterval: '2m',
  backoffCoefficient: 2,
  deadline: '24h',
} as const;

/** Each poll interval is shortened by up to this fraction, deterministically (see docs/agent-job.md). */
export const POLL_JITTER_RATIO = 0.1;

/**
 * Bounds that keep the workflow state (carried across continue-as-new) far below Temporal's payload limits:
 * follow-ups queued and not yet sent; settled ones listed in state and result (older ones dropped from the list);
 * follow-ups one job takes in its life, sent or waiting (SentFollowUpLedger); characters kept of a listed prompt.
 */
export const FOLLOW_UP_LIMITS = {
  maxPending: 20,
  maxRecords: 500,
  maxPerJob: 10_000,
  recordPromptChars: 500,
} as const;

/** ApplicationFailure types the agentJob workflow fails with: docs/agent-job.md, "Result and failures". */
export const AgentJobFailureType = {
  jobFailed: 'AgentJobFailed',
  timedOut: 'AgentJobTimedOut',
  createOutcomeUnknown: 'AgentJobCreateOutcomeUnknown',
  keyInUse: 'AgentJobKeyInUse',
  createRejected: 'AgentJobCreateRejected',
  jobNotFound: 'AgentJobNotFound',
  pollRejected: 'AgentJobPollRejected',
  invalidInput: INVALID_INPUT_FAILURE_TYPE,
} as const;

export type AgentJobFailureTypeName = (typeof AgentJobFailureType)[keyof typeof AgentJobFailureType];

/**
 * Failures of the agent job activities that the workflow handles itself: a poll attempt found the job still
 * running (benign, retried after the next interval); the create record could not be read (nothing was sent).
 */
export const AgentJobActivityFailureType = {
  stillRunning: 'AgentJobStillRunning',
  createRecordUnreadable: 'CreateRecordUnreadable',
} as const;

/**
 * What the poll activity's attempts carry from one to the next: the live status, the reads the service answered
 * (errors are not polls) and the last service error. In the heartbeat and the still-running failure's details[0];
 * a service error's failure carries the reads in details[1], its message is the error.
 */
export type PollProgress = { status?: string; polls: number; lastError?: string };

/** The progress in details this activity wrote (none: nothing read yet). */
export function pollProgressIn(details: unknown): PollProgress {
  return { polls: 0, ...(details as Partial<PollProgress> | undefined) };
}

export function pollProgressOf(failure: ApplicationFailure): PollProgress {
  if (failure.type === AgentJobActivityFailureType.stillRunning) return pollProgressIn(failure.details?.[0]);
  return { ...pollProgressIn(failure.details?.[1]), lastError: failure.message };
}

/**
 * What a failed create or message means, from its ApplicationFailure (undefined: a timeout, a crash): `resend`
 * the service cannot have acted (connection refused, 429, 503); `rejected` it refused for good; `unknown` it may
 * have acted (timeout, worker crash, other 5xx), so it is never sent again.
 */
export function callOutcomeOf(failure: ApplicationFailure | undefined): {
  kind: 'resend' | 'rejected' | 'unknown';
  details?: DocsApiFailureDetails | undefined;
} {
  const details = docsApiDetailsOf(failure?.details);
  if (failure === undefined) return { kind: 'unknown' };
  if (failure.nonRetryable === true) return { kind: 'rejected', details };
  return { kind: details?.safeToRetry === true ? 'resend' : 'unknown', details };
}

/** ApplicationFailure types a `sendFollowUp` update fails with, the workflow going on (docs/agent-job.md). */
export const FollowUpFailureType = {
  notAccepted: 'FollowUpNotAccepted',
  invalidInput: INVALID_INPUT_FAILURE_TYPE,
  rejected: 'FollowUpRejected',
  outcomeUnknown: 'FollowUpOutcomeUnknown',
  notSent: 'FollowUpNotSent',
} as const;

export type FollowUpFailureTypeName = (typeof FollowUpFailureType)[keyof typeof FollowUpFailureType];

/** pending: queued in the workflow; delivered: the service accepted it; rejected: refused (by the service or the
 * workflow); outcome_unknown: the request may or may not have reached the service (never silently re-sent). */
export const FOLLOW_UP_STATUSES = ['pending', 'delivered', 'rejected', 'outcome_unknown'] as const;
export type FollowUpStatus = (typeof FOLLOW_UP_STATUSES)[number];

/**
 * The follow-up request's rules, declared once, per field: its message when not a string, its longest text, its
 * text rule. The contract's `followUpRequestSchema` (zod) and `followUpRequestIssues` (the sandbox's synchronous
 * check, where zod is not evaluated) are both built from them.
 */
export const FOLLOW_UP_REQUEST_RULES = {
  prompt: {
    typeError: 'is required and must be a string',
    maxChars: MAX_PROMPT_CHARS,
    optional: false,
    text: promptTextIssue,
  },
  messageId: {
    typeError: 'must be a string',
    maxChars: MAX_MESSAGE_ID_CHARS,
    optional: true,
    text: (value: string) => (value.length === 0 ? PROMPT_TEXT_RULES.empty : undefined),
  },
};

export type TextRule = (typeof FOLLOW_UP_REQUEST_RULES)[keyof typeof FOLLOW_UP_REQUEST_RULES];

export function textRuleIssues(rule: TextRule, value: string): string[] {
  const issues = [rule.text(value)];
  if (value.length > rule.maxChars) issues.push(`must be at most ${rule.maxChars} characters`);
  return issues.filter((issue) => issue !== undefined);
}

/** `FOLLOW_UP_REQUEST_RULES` applied as zod applies the schema built from them, with zod's own messages. */
export function followUpRequestIssues(raw: unknown, subject: string): InputIssue[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    const kind = raw === null ? 'null' : Array.isArray(raw) ? 'array' : typeof raw;
    return [{ field: subject, rule: `Invalid input: expected object, received ${kind}` }];
  }
  const fields = raw as Record<string, unknown>;
  const issues: InputIssue[] = [];
  for (const [field, rule] of Object.entries(FOLLOW_UP_REQUEST_RULES)) {
    const value = fields[field];
    if (value === undefined && rule.optional) continue;
    const rules = typeof value === 'string' ? textRuleIssues(rule, value) : [rule.typeError];
    issues.push(...rules.map((text) => ({ field, rule: text })));
  }
  const unknown = Object.keys(fields).filter((key) => !(key in FOLLOW_UP_REQUEST_RULES));
  if (unknown.length > 0) {
    const names = unknown.map((key) => `"${key}"`).join(', ');
    issues.push({ field: subject, rule: `Unrecognized key${unknown.length > 1 ? 's' : ''}: ${names}` });
  }
  return issues;
}

/**
 * What the ledger keeps of a messageId: FNV-1a (64 bit) of its UTF-16 code units, 16 hex digits, so that 10,000 ids
 * take 190 KB of state whatever their length. Two ids with one key (about 3 in 10^12 at 10,000 ids) make the second
 * a duplicate, refused: never a message sent twice.
 */
export function messageIdKey(messageId: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < messageId.length; i++) {
    hash = ((hash ^ BigInt(messageId.charCodeAt(i))) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

type SentStatus = 'delivered' | 'outcome_unknown';

/** The ledger as JSON: messageIdKeys by status (`sentFollowUpsSchema` in agent-job.ts checks it at the edges). */
export interface SentFollowUps {
  delivered: string[];
  outcomeUnknown: string[];
}

/**
 * The messageIds the service may have received for one job, by key: delivered, or outcome unknown (in flight
 * included). Never trimmed: FOLLOW_UP_LIMITS.maxPerJob bounds it. One the service refused, or never got, leaves
 * it. Carried across continue-as-new and into a new run of a closed job.
 */
export class SentFollowUpLedger {
  readonly #status = new Map<string, SentStatus>();

  constructor(carried?: SentFollowUps) {
    this.add(carried);
  }

  /** Takes in another run's ledger of the same job: a delivered id stays delivered. */
  add(carried: SentFollowUps | undefined): void {
    for (const key of carried?.outcomeUnknown ?? []) {
      if (!this.#status.has(key)) this.#status.set(key, 'outcome_unknown');
    }
    for (const key of carried?.delivered ?? []) this.#status.set(key, 'delivered');
  }

  get size(): number {
    return this.#status.size;
  }

  statusOf(messageId: string): SentStatus | undefined {
    return this.#status.get(messageIdKey(messageId));
  }

  set(messageId: string, status: SentStatus | undefined): void {
    if (status === undefined) this.#status.delete(messageIdKey(messageId));
    else this.#status.set(messageIdKey(messageId), status);
  }

  toJSON(): SentFollowUps {
    const sent: SentFollowUps = { delivered: [], outcomeUnknown: [] };
    for (const [key, status] of this.#status) {
      (status === 'delivered' ? sent.delivered : sent.outcomeUnknown).push(key);
    }
    return sent;
  }
}
