import { z } from 'zod';
import { parseDuration, type DurationInput } from './duration';
import {
  FOLLOW_UP_LIMITS,
  FOLLOW_UP_REQUEST_RULES,
  FOLLOW_UP_STATUSES,
  MIN_POLL_INTERVAL_MS,
  textRuleIssues,
  type SentFollowUps,
  type TextRule,
} from './agent-job-constants';
import { durationSchema, intInRange, jobIdSchema, promptSchema, projectIdSchema } from './validation';

export * from './agent-job-constants';

/** The job as the service describes it (its interface, 2.1), after the HTTP client's lenient parser. */
export const agentJobSchema = z
  .object({
    id: z.string().min(1),
    /** `active`, `completed`, `archived`, `failed`, or a value the interface does not list yet. */
    status: z.string().min(1),
    prLink: z.string().nullable(),
    model: z.string().optional(),
    source: z
      .object({ repository: z.string().optional(), ref: z.string().nullable().optional() })
      .strict()
      .optional(),
    createdAt: z.string().optional(),
    archivedAt: z.string().nullable().optional(),
  })
  .strict();

export type AgentJob = z.infer<typeof agentJobSchema>;

/**
 * What the create activity records once it sent a create: the agentJob workflow and run that sent it, the job
 * the service answered (no `jobId`: the outcome is unknown, a job may exist), the hex SHA-256 of the prompt (a
 * later run under the same id with another prompt is refused) and when (ISO 8601).
 */
export interface AgentJobCreateRecord {
  workflowId: string;
  runId: string;
  projectId: string;
  jobId?: string;
  promptSha256: string;
  recordedAt: string;
}

/** The run that created the job, when a later run under the same workflow id answered from its record. */
export const alreadyCreatedBySchema = z.object({ runId: z.string(), recordedAt: z.string() }).strict();

export type AlreadyCreatedBy = z.infer<typeof alreadyCreatedBySchema>;

export type AgentJobResult = Omit<AgentJob, 'id'> & {
  jobId: string;
  followUps: FollowUpRecord[];
  polls: number;
  alreadyCreatedBy?: AlreadyCreatedBy;
};

/** The workflow's view of the job while it runs; `model` and `source` as the service last answered them. */
export interface AgentJobState extends Pick<AgentJob, 'model' | 'source'> {
  projectId: string;
  jobId: string | null;
  status: string;
  prLink: string | null;
  /** Reads the service answered: getState counts finished poll activities; getAgentJobState adds the running one's. */
  polls: number;
  /** The running poll activity's next read (ISO 8601), from describe(): getAgentJobState's; null from getState. */
  nextPollAt: string | null;
  pollingSince: string | null;
  inFlight: string | null;
  pendingFollowUps: number;
  /** Follow-up signals not queued (invalid, queue full, job ending), each listed in `followUps` as `rejected`. */
  notAcceptedFollowUps: number;
  followUps: FollowUpRecord[];
  lastError: string | null;
  deadlineAt: string;
  /** The job's polling in milliseconds: a new run of the closed job (followUpAnyState) keeps it. */
  polling: CompletePollingOptions;
  continuedRuns: number;
  /** A create or message waits for the project's budget (DOCS_API_AGENT_RATE_LIMIT), in the order asked. */
  queuedForBudget: boolean;
  /** The budget limiter's estimate of when it goes (ISO 8601), once it sent one; null otherwise. */
  waitingForBudgetUntil: string | null;
}

export const pollingOptionsSchema = z
  .object({
    initialInterval: durationSchema.optional(),
    maxInterval: durationSchema.optional(),
    backoffCoefficient: z
      .number({ error: 'must be a number' })
      .min(1, 'must be at least 1')
      .max(10, 'must be at most 10')
      .optional(),
    deadline: durationSchema.optional(),
  })
  .strict()
  .superRefine((polling, ctx) => {
    const ms = (value: DurationInput | undefined) => (value === undefined ? undefined : parseDuration(value));
    const issue = (field: string, message: string) =>
      ctx.addIssue({ code: 'custom', path: [field], message });
    const [initial, max, deadline] = [
      ms(polling.initialInterval),
      ms(polling.maxInterval),
      ms(polling.deadline),
    ];
    if (initial !== undefined && initial < MIN_POLL_INTERVAL_MS) {
      issue('initialInterval', `must be at least ${MIN_POLL_INTERVAL_MS} ms`);
    }
    if (max !== undefined && max < (initial ?? MIN_POLL_INTERVAL_MS))
      issue('maxInterval', 'must be at least initialInterval');
    if (deadline !== undefined && deadline < 1000) issue('deadline', 'must be at least 1 s');
  });

export type PollingOptions = z.infer<typeof pollingOptionsSchema>;
export type CompletePollingOptions = { [K in keyof PollingOptions]-?: NonNullable<PollingOptions[K]> };

function textSchema(rule: TextRule) {
  return z.string({ error: rule.typeError }).superRefine((value, ctx) => {
    for (const message of textRuleIssues(rule, value)) ctx.addIssue({ code: 'custom', message });
  });
}

/** `messageId` is the deduplication key: a follow-up is delivered to the service at most once per messageId. */
export const followUpRequestSchema = z
  .object({
    prompt: textSchema(FOLLOW_UP_REQUEST_RULES.prompt),
    messageId: textSchema(FOLLOW_UP_REQUEST_RULES.messageId).optional(),
  })
  .strict();

export type FollowUpRequest = z.infer<typeof followUpRequestSchema>;

const nonNegativeInt = intInRange(0);

export const followUpRecordSchema = z
  .object({
    messageId: z.string().min(1),
    prompt: z.string(),
    status: z.enum(FOLLOW_UP_STATUSES),
    error: z.string().optional(),
  })
  .strict();

export type FollowUpRecord = z.infer<typeof followUpRecordSchema>;

/** A follow-up accepted by the workflow and not yet sent; `unnamed`: its id is the workflow's (followup-N). */
const pendingFollowUpSchema = z
  .object({ messageId: z.string().min(1), prompt: promptSchema, unnamed: z.literal(true).optional() })
  .strict();

export type PendingFollowUp = z.infer<typeof pendingFollowUpSchema>;

const messageIdKeys = z
  .array(z.string().regex(/^[0-9a-f]{16}$/, 'must be 16 hex digits (messageIdKey)'))
  .max(FOLLOW_UP_LIMITS.maxPerJob);

/** The keys (messageIdKey) of the messageIds the service may have received (SentFollowUpLedger). */
export const sentFollowUpsSchema = z
  .object({ delivered: messageIdKeys, outcomeUnknown: messageIdKeys })
  .strict() satisfies z.ZodType<SentFollowUps>;

/** What one run hands to the next on continue-as-new (the job id travels in `jobId`). */
export const agentJobContinuationSchema = z
  .object({
    /** Absolute deadline, epoch milliseconds: it does not restart with a new run. */
    deadlineAt: nonNegativeInt,
    polls: nonNegativeInt,
    job: agentJobSchema.nullable(),
    pollAfterMessage: z.boolean(),
    followUps: z.array(followUpRecordSchema).max(FOLLOW_UP_LIMITS.maxRecords),
    pendingFollowUps: z.array(pendingFollowUpSchema).max(FOLLOW_UP_LIMITS.maxPending),
    sentFollowUps: sentFollowUpsSchema,
    /** Follow-ups received without a messageId so far (their default ids are numbered). */
    unnamedFollowUps: nonNegativeInt,
    lastError: z.string().nullable(),
    resendAt: nonNegativeInt,
    resendAttempt: nonNegativeInt,
    notAcceptedFollowUps: nonNegativeInt,
    continuedRuns: nonNegativeInt,
    alreadyCreatedBy: alreadyCreatedBySchema.optional(),
    /** The follow-ups earlier runs of the workflow id sent are still to be read (state.earlierUnread). */
    earlierUnread: z.literal(true).optional(),
  })
  .strict();

export type AgentJobContinuation = z.infer<typeof agentJobContinuationSchema>;

/** What earlier runs of a workflow id settled and sent: a new run under it never sends those messageIds again. */
export type EarlierFollowUps = Pick<AgentJobContinuation, 'followUps' | 'sentFollowUps'>;

/** The getSentFollowUps answer: `earlierUnread`, the run had not yet read what runs before it sent. */
export type SentFollowUpsOfRun = SentFollowUps & { earlierUnread?: true };

export const agentJobInputSchema = z
  .object({
    projectId: projectIdSchema,
    /** With `jobId`, nothing is created: the prompt only describes the run. */
    prompt: promptSchema,
    polling: pollingOptionsSchema.optional(),
    /** Attach to an existing service job instead of creating one (a follow-up after the workflow closed). */
    jobId: jobIdSchema.optional(),
    /** History events after which a run continues as new; default CONTINUE_AS_NEW_AFTER_EVENTS.agentJob. */
    continueAsNewAfterEvents: intInRange(100)
      .max(40_000, 'must be at most 40000 (Temporal fails a run at 51200 events)')
      .optional(),
    /** Set by the workflow itself when it continues as new; not for callers. */
    continuation: agentJobContinuationSchema.optional(),
  })
  .strict();

export type AgentJobInput = z.infer<typeof agentJobInputSchema>;
