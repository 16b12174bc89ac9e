import { createHash, randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowExecutionInfo,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  decodeFromPayloadsAtIndex,
  decodeOptionalFailureToOptionalError,
} from '@temporalio/common/lib/internal-non-workflow';
import * as proto from '@temporalio/proto';
import {
  AgentJobFailureType,
  AgentJobIdKey,
  AgentJobStatusKey,
  CREATE_RECORD_ID_PREFIX,
  DocsProjectIdKey,
  FOLLOW_UP_LIMITS,
  FollowUpNotAcceptedError,
  WorkflowType,
  getSentFollowUpsQuery,
  getStateQuery,
  quoteVisibility,
  refusesFollowUps,
  type AgentJob,
  type AgentJobCreateRecord,
  type AgentJobCreateRecordWorkflow,
  type AgentJobInput,
  type CompletePollingOptions,
  type EarlierFollowUps,
  type FollowUpRecord,
} from '../contract';
import { SentFollowUpLedger, callOutcomeOf } from '../contract/agent-job-constants';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/**
 * The id of the create record of the agentJob workflow `workflowId`, one shape for every id. Written by the create
 * activity once the service answered, it outlives the job's runs (terminated, reset, or a new start under the id).
 */
export function agentJobCreateRecordId(workflowId: string): string {
  return CREATE_RECORD_ID_PREFIX + createHash('sha256').update(workflowId).digest('hex');
}

/** The create that the agentJob workflow `workflowId` sent, from its create record; undefined when none. */
export async function readCreateRecord(client: Client, workflowId: string) {
  const handle = client.workflow.getHandle<AgentJobCreateRecordWorkflow>(agentJobCreateRecordId(workflowId));
  try {
    return await handle.result();
  } catch (error) {
    // A record always completes: a failed run under its id (an agentJob refused for the reserved id) is none.
    if (error instanceof WorkflowNotFoundError || error instanceof WorkflowFailedError) return undefined;
    throw error;
  }
}

/** Records a create: the first record of a workflow id stays (a repeat is a no-op), a failed run is replaced. */
export async function writeCreateRecord(
  client: Client,
  record: AgentJobCreateRecord,
  taskQueue: string,
): Promise<void> {
  await client.workflow
    .start<AgentJobCreateRecordWorkflow>(WorkflowType.agentJobCreateRecord, {
      workflowId: agentJobCreateRecordId(record.workflowId),
      taskQueue,
      args: [record],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      staticSummary:
        record.jobId === undefined
          ? `A create of unknown outcome, sent by ${record.workflowId}`
          : `Job ${record.jobId} created by ${record.workflowId}`,
    })
    .catch((error: unknown) => {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    });
}

/**
 * A create an earlier run of the workflow id sent that the service may have acted on, read from the runs'
 * histories, for when the id's create record is missing (its writes failed and the run was terminated, or the
 * record was deleted): its project and prompt, and its job when the service answered one. A create the service
 * refused, or cannot have acted on (callOutcomeOf), is none.
 */
export async function earlierCreateOf(client: Client, workflowId: string, exceptRunId: string) {
  const converter = client.options.loadedDataConverter;
  const query = `WorkflowId = ${quoteVisibility(workflowId)} AND WorkflowType = ${quoteVisibility(WorkflowType.agentJob)}`;
  for await (const run of client.workflow.list({ query })) {
    if (run.runId === exceptRunId) continue;
    const events = (await client.workflow.getHandle(workflowId, run.runId).fetchHistory()).events ?? [];
    for (const { type, closedBy } of serviceCallsOf(events)) {
      if (type !== 'createAgentJob') continue;
      const completed = closedBy?.activityTaskCompletedEventAttributes?.result?.payloads;
      const failed = closedBy?.activityTaskFailedEventAttributes?.failure;
      let jobId: string | undefined;
      if (completed) {
        jobId = (await decodeFromPayloadsAtIndex<AgentJob>(converter, 0, completed)).id;
      } else if (failed) {
        const failure = await decodeOptionalFailureToOptionalError(converter, failed);
        const outcome = callOutcomeOf(failure instanceof ApplicationFailure ? failure : undefined);
        if (outcome.kind !== 'unknown') continue;
        jobId = outcome.details?.jobId;
      }
      const started = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
      const { projectId, prompt } = await decodeFromPayloadsAtIndex<AgentJobInput>(converter, 0, started);
      return { runId: run.runId, projectId, prompt, ...(jobId === undefined ? {} : { jobId }) };
    }
  }
  return undefined;
}

export type EarlierCreate = NonNullable<Awaited<ReturnType<typeof earlierCreateOf>>>;

/** The runs of the workflow id that followed a service job (they set AgentJobId), latest first. */
async function runsWithJob(client: Client, workflowId: string, exceptRunId?: string) {
  const runs: WorkflowExecutionInfo[] = [];
  const query = `WorkflowId = ${quoteVisibility(workflowId)} AND ${AgentJobIdKey.name} IS NOT NULL`;
  for await (const run of client.workflow.list({ query })) if (run.runId !== exceptRunId) runs.push(run);
  return runs.sort((a, b) => b.startTime.getTime() - a.startTime.getTime());
}

/**
 * The service job of a closed workflow id, or why a follow-up cannot continue it (`refusal`). The job is the
 * latest run's, else that of the latest run that had one (a run refused before it had a job, AgentJobKeyInUse or
 * InvalidInput, knows nothing of it), else (a run terminated while its create was in flight) its create record's.
 * Without a job, a create the run sent that the service did not refuse (4xx) may have made one: it says so.
 */
export async function closedJobOf(client: Client, workflowId: string, last: WorkflowExecutionDescription) {
  const withJob = (run: Pick<WorkflowExecutionInfo, 'typedSearchAttributes'>) =>
    run.typedSearchAttributes.get(AgentJobIdKey) !== undefined;
  const run = withJob(last) ? last : ((await runsWithJob(client, workflowId))[0] ?? last);
  const record = withJob(run) ? undefined : await readCreateRecord(client, workflowId);
  const jobId = run.typedSearchAttributes.get(AgentJobIdKey) ?? record?.jobId;
  const projectId = run.typedSearchAttributes.get(DocsProjectIdKey);
  const status = run.typedSearchAttributes.get(AgentJobStatusKey) ?? '';
  if (jobId !== undefined && projectId !== undefined) {
    if (!refusesFollowUps(status)) return { run, jobId, projectId, refusal: undefined };
    return { jobId, refusal: `Job ${jobId} is ${status}: it takes no follow-ups; start a new job` };
  }
  const events = (await client.workflow.getHandle(workflowId, last.runId).fetchHistory()).events ?? [];
  const failure = events.at(-1)?.workflowExecutionFailedEventAttributes?.failure?.applicationFailureInfo;
  const createSent =
    record !== undefined ||
    (failure?.type !== AgentJobFailureType.createRejected &&
      serviceCallsOf(events).some((call) => call.type === 'createAgentJob'));
  const closed = `Workflow ${workflowId} closed (${last.status.name})`;
  const refusal = createSent
    ? `${closed} after a create of unknown outcome (run ${record?.runId ?? last.runId}): a job may exist at the service; look at the project's jobs there before starting another`
    : `${closed} before a service job was created: there is no job to follow up; start a new one`;
  return { jobId, refusal };
}

/**
 * What a closed run hands to a new run of its job, read by queries (a worker replays it): the messageIds it sent,
 * the follow-ups it settled, its polling. A pending one in the sent ledger was being sent as the run ended
 * (terminated): it is outcome unknown. Without the ledger an id could be sent twice, so then nothing is sent.
 */
export async function earlierRunOf(client: Client, workflowId: string, runId: string) {
  const handle = client.workflow.getHandle(workflowId, runId);
  // One query at a time: two at once on a closed run can leave one unanswered until the call's deadline (the
  // SDK 1.24 worker drops a query it buffered while it evicts the run: "leftover buffered tasks").
  const read = async () =>
    [await handle.query(getStateQuery), await handle.query(getSentFollowUpsQuery)] as const;
  const [state, sentFollowUps] = await read().catch((error: unknown) => {
    throw new FollowUpNotAcceptedError(
      `Workflow ${workflowId}: the follow-ups its closed run sent could not be read, so one could be sent twice; ` +
        `nothing was sent (is a worker running?)`,
      workflowId,
      { cause: error },
    );
  });
  const sent = new SentFollowUpLedger(sentFollowUps);
  const followUps = state.followUps.flatMap((record): FollowUpRecord[] => {
    if (record.status !== 'pending') return [record];
    if (sent.statusOf(record.messageId) === undefined) return [];
    return [
      { ...record, status: 'outcome_unknown', error: 'the run closed while this follow-up was being sent' },
    ];
  });
  return {
    sent,
    sentFollowUps,
    followUps: followUps.slice(-FOLLOW_UP_LIMITS.maxRecords),
    polling: state.polling,
  };
}

/**
 * What the runs of the workflow id that followed the job (but `exceptRunId`) sent and settled, and the latest
 * one's polling: the latest run's, and, while a run closed before it had read the runs before it, theirs too.
 */
export async function earlierRunsOf(client: Client, workflowId: string, exceptRunId?: string) {
  const runs = await runsWithJob(client, workflowId, exceptRunId);
  if (runs.length === 0) return undefined;
  const sent = new SentFollowUpLedger();
  const followUps: FollowUpRecord[] = [];
  let polling: CompletePollingOptions | undefined;
  for (const run of runs) {
    const earlier = await earlierRunOf(client, workflowId, run.runId).catch(async (error: unknown) => {
      // A run closed before its first workflow task answers no query; it sent nothing and read nothing.
      const { events } = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
      if (events?.some((event) => event.workflowTaskCompletedEventAttributes)) throw error;
      return undefined;
    });
    if (earlier === undefined) continue;
    polling ??= earlier.polling;
    sent.add(earlier.sentFollowUps);
    const known = new Set(followUps.map((record) => record.messageId));
    followUps.unshift(...earlier.followUps.filter((record) => !known.has(record.messageId)));
    if (earlier.sentFollowUps.earlierUnread !== true) break;
  }
  return { sent, followUps: followUps.slice(-FOLLOW_UP_LIMITS.maxRecords), polling };
}

/** What the earlier runs that followed the job sent and settled, for a run started again under the id. */
export async function earlierFollowUpsOf(
  client: Client,
  workflowId: string,
  exceptRunId: string,
): Promise<EarlierFollowUps | undefined> {
  const earlier = await earlierRunsOf(client, workflowId, exceptRunId);
  return earlier && { followUps: earlier.followUps, sentFollowUps: earlier.sent.toJSON() };
}

/** The activities whose request the service acts on (it has no idempotency key), and what a second one does. */
const SERVICE_CALLS = {
  createAgentJob: {
    name: 'create',
    again: 'the service may have created a job, and a reset there would create another',
  },
  sendAgentJobMessage: {
    name: 'follow-up message',
    again: 'it may have reached the service, and a reset there would send it again',
  },
} as const;

export interface ServiceCall {
  type: keyof typeof SERVICE_CALLS;
  /** Event ids: scheduled, and closed (null while in flight). */
  scheduledAt: number;
  closedAt: number | null;
  /** The event that closed it: completed, failed, timed out or cancelled. */
  closedBy?: HistoryEvent;
}

/** The run's creates and messages, in the order scheduled. */
export function serviceCallsOf(events: readonly HistoryEvent[]): ServiceCall[] {
  const calls = new Map<number, ServiceCall>();
  for (const event of events) {
    const id = Number(event.eventId ?? 0);
    const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type != null && Object.hasOwn(SERVICE_CALLS, type)) {
      calls.set(id, { type: type as ServiceCall['type'], scheduledAt: id, closedAt: null });
    }
    const closed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    const call = closed?.scheduledEventId == null ? undefined : calls.get(Number(closed.scheduledEventId));
    if (call) Object.assign(call, { closedAt: id, closedBy: event });
  }
  return [...calls.values()];
}

/**
 * Where an agentJob run may be reset without sending anything twice, from its history alone: the
 * WorkflowTaskCompleted event ids, oldest first. A reset to such an event E runs the workflow on from E: a create
 * or message scheduled before E and closed after it is dispatched again, one scheduled after E is made again. So
 * E is safe only once every create and message of the run closed before it; while one is in flight none is.
 */
export function resetPointsOf(events: readonly HistoryEvent[]) {
  const calls = serviceCallsOf(events);
  const inFlight = calls.some((call) => call.closedAt === null);
  const lastClose = Math.max(0, ...calls.map((call) => call.closedAt ?? 0));
  const safe = events
    .filter((event) => event.workflowTaskCompletedEventAttributes)
    .map((event) => Number(event.eventId ?? 0))
    .filter((id) => !inFlight && id > lastClose);
  return { safe, calls };
}

/** Why a reset to this event would send a request again (the first call it would repeat). */
function whyUnsafe(calls: ServiceCall[], toEventId: number | undefined, closed: boolean): string {
  const open = calls.find((call) => call.closedAt === null);
  if (open) {
    const what = `the ${SERVICE_CALLS[open.type].name} scheduled at event ${open.scheduledAt}`;
    return closed
      ? `${what} was in flight when the run closed: the service may have acted on it, and it never closes; continue the job with \`job message\` instead`
      : `${what} is in flight: the service may act on it at any moment; reset once it has closed`;
  }
  if (toEventId === undefined)
    return 'no workflow task has completed since the last create or message closed';
  const call = calls.find(({ closedAt }) => closedAt !== null && closedAt > toEventId);
  if (!call) return `event ${toEventId} is not a workflow task completion of the run`;
  const { name, again } = SERVICE_CALLS[call.type];
  return `event ${toEventId} precedes the ${name} closed at event ${call.closedAt}: ${again}`;
}

/** A reset that could send a create or a follow-up again: refused, nothing was changed. */
export class AgentJobResetRefusedError extends Error {
  override readonly name = 'AgentJobResetRefused';
  constructor(
    message: string,
    readonly points: { safe: number[]; calls: Omit<ServiceCall, 'closedBy'>[] },
  ) {
    super(message);
  }
}

/** The current run of an agentJob workflow, its safe reset points (resetPointsOf), and why no point is safe. */
export async function agentJobResetPoints(client: Client, workflowId: string) {
  const { runId, status } = await client.workflow.getHandle(workflowId).describe();
  const { events } = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const { safe, calls } = resetPointsOf(events ?? []);
  const closed = status.name !== 'RUNNING';
  return {
    runId,
    safe,
    calls: calls.map(({ closedBy: _, ...call }) => call),
    whyUnsafe: (toEventId?: number) => whyUnsafe(calls, toEventId, closed),
  };
}

/**
 * Resets the current run of an agentJob workflow to a safe point (resetPointsOf), by default the latest; any
 * other point throws AgentJobResetRefusedError with the reason. Signals after the point are applied again.
 */
export async function resetAgentJob(
  client: Client,
  workflowId: string,
  options: { toEventId?: number; reason?: string } = {},
) {
  const { runId, whyUnsafe: why, ...points } = await agentJobResetPoints(client, workflowId);
  const toEventId = options.toEventId ?? points.safe.at(-1);
  if (toEventId === undefined || !points.safe.includes(toEventId)) {
    const safe = points.safe.length === 0 ? 'no point is safe now' : `safe points: ${points.safe.join(', ')}`;
    throw new AgentJobResetRefusedError(`${why(toEventId)}; ${safe}`, points);
  }
  // fromObject turns the event id into the protocol's 64-bit integer.
  const request = proto.temporal.api.workflowservice.v1.ResetWorkflowExecutionRequest.fromObject({
    namespace: client.options.namespace,
    workflowExecution: { workflowId, runId },
    reason: options.reason ?? 'docs-agent job reset',
    workflowTaskFinishEventId: toEventId,
    requestId: randomUUID(),
  });
  const { runId: resetRunId } = await client.workflowService.resetWorkflowExecution(request);
  return { runId, resetRunId: resetRunId ?? '', toEventId };
}
