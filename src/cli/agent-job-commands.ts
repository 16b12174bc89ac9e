import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { Command, CommandUnknownOpts, OptionValues } from '@commander-js/extra-typings';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { z } from 'zod';
import {
  agentJobFailureOf,
  agentJobStartOptions,
  awaitAgentJob,
  followUpFailureOf,
  followUpAnyState,
  getAgentJobState,
  idempotencyKeySchema,
  sendFollowUpAndWait,
  startAgentJob,
} from '../client/agent-job';
import {
  AgentJobResetRefusedError,
  readCreateRecord,
  resetAgentJob,
  serviceCallsOf,
} from '../client/agent-job-runs';
import { defined } from '../client/schedule';
import {
  AgentJobFailureType,
  FOLLOW_UP_REFUSING_STATUSES,
  FOLLOW_UP_STATUSES,
  FollowUpFailureType,
  followUpRequestSchema,
  KNOWN_JOB_STATUSES,
  STATUS_NOT_CREATED,
  type AgentJob,
  type AgentJobResult,
  type FollowUpRecord,
  type FollowUpStatus,
} from '../contract/agent-job';
import { getStateQuery } from '../contract/messages';
import {
  AgentJobIdKey,
  agentJobWorkflowId,
  AgentJobStatusKey,
  quoteVisibility,
  WorkflowType,
} from '../contract/names';
import { durationSchema, intFromText as integer, parseOrThrow, promptSchema } from '../contract/validation';
import {
  ExitCode,
  listCommand,
  option,
  print,
  projectOption,
  text,
  UsageError,
  watch,
  type Run,
} from './command';

/** AgentJobStatus holds the service's status as it answered (any status, also one the interface does not list). */
const STATUS_EXAMPLES = [STATUS_NOT_CREATED, ...KNOWN_JOB_STATUSES, 'paused_for_review'].join(', ');

function targeted<A extends unknown[], O extends OptionValues, G extends OptionValues>(
  command: Command<A, O, G>,
) {
  return command
    .addOption(option('--workflow-id <id>', "the job's workflow id, whichever its caller chose", text))
    .addOption(projectOption('project id (with --key, instead of --workflow-id)'))
    .addOption(option('--key <key>', 'idempotency key the job was started with', idempotencyKeySchema));
}

function workflowIdOf(flags: { workflowId?: string; project?: string; key?: string }): string {
  if (flags.workflowId) return flags.workflowId;
  if (flags.project && flags.key) return agentJobWorkflowId(flags.project, flags.key);
  throw new UsageError('--workflow-id, or --project with --key, is required');
}

function prompted<A extends unknown[], O extends OptionValues, G extends OptionValues>(
  command: Command<A, O, G>,
  what: string,
) {
  return command
    .addOption(option('--prompt <text>', what, promptSchema))
    .addOption(option('--prompt-file <path>', 'read the prompt from a file ("-" for stdin)', text));
}

function promptOf({ prompt, promptFile }: { prompt?: string; promptFile?: string }): string {
  if (promptFile === undefined) {
    if (prompt !== undefined) return prompt;
    throw new UsageError('--prompt (or --prompt-file) is required: the instruction for the agent');
  }
  try {
    return fs.readFileSync(promptFile === '-' ? 0 : promptFile, 'utf8');
  } catch (error) {
    throw new UsageError(`--prompt-file: cannot read "${promptFile}": ${(error as Error).message}`);
  }
}

export function jobCommands(program: CommandUnknownOpts, run: Run): void {
  const job = program.command('job').description('agent jobs: start, follow up, watch, list, cancel, reset');

  const start = job.command('start').description('start an agent job from a prompt');
  prompted(start.addOption(projectOption().makeOptionMandatory()), 'the instruction for the agent')
    .addOption(
      option('--key <key>', 'one job per project and key (default: a new UUID)', idempotencyKeySchema),
    )
    .addOption(option('--initial-interval <duration>', 'first poll interval, e.g. 5s', durationSchema))
    .addOption(option('--max-interval <duration>', 'longest poll interval, e.g. 2m', durationSchema))
    .addOption(option('--deadline <duration>', 'give up after this long, e.g. 24h', durationSchema))
    .option('--wait', 'show the live status until the job ends, then print the PR link')
    .action((flags) =>
      run(async ({ client, taskQueue, json }) => {
        const polling = defined({
          initialInterval: flags.initialInterval,
          maxInterval: flags.maxInterval,
          deadline: flags.deadline,
        });
        const input = {
          projectId: flags.project,
          prompt: promptOf(flags),
          ...(Object.keys(polling).length > 0 ? { polling } : {}),
        };
        const options = { key: flags.key ?? randomUUID(), taskQueue };
        // The rules across fields (the polling intervals' order, say) are checked before connecting too.
        agentJobStartOptions(input, options);
        const connected = await client();
        const { workflowId } = await startAgentJob(connected, input, options);
        if (!flags.wait || !json) print(json, { workflowId }, `workflow id: ${workflowId}`);
        return flags.wait ? waitForJob(connected, workflowId, json) : ExitCode.ok;
      }, 'trace'),
    );

  const message = job.command('message').description('send a follow-up to a job (running or closed)');
  prompted(targeted(message), 'the follow-up instruction')
    .addOption(
      option(
        '--message-id <id>',
        'deduplication id: sent at most once per job (default: a new UUID, printed)',
        followUpRequestSchema.shape.messageId,
      ),
    )
    .option('--wait', "send as an update and print the service's answer")
    .action((flags) =>
      run(async ({ client, taskQueue, json }) => {
        const workflowId = workflowIdOf(flags);
        // A messageId is always sent, so that the receipt can be found and the command repeated safely.
        const request = { prompt: promptOf(flags), messageId: flags.messageId ?? randomUUID() };
        parseOrThrow(followUpRequestSchema, request, 'follow-up');
        const connected = await client();
        if (flags.wait) return followUpAndWait(connected, workflowId, request, json);
        const delivery = await followUpAnyState(connected, workflowId, request, { taskQueue });
        const { earlierStatus, runId } = delivery;
        const record =
          earlierStatus === undefined
            ? await receiptOf(connected, workflowId, runId, request.messageId)
            : undefined;
        return printReceipt(
          json,
          { ...delivery, messageId: request.messageId },
          earlierStatus ?? record?.status,
          record?.error,
        );
      }),
    );

  targeted(job.command('status').description("show a job's live state or result")).action((flags) =>
    run(async ({ client, json }) => {
      const workflowId = workflowIdOf(flags);
      return jobStatus(await client(), workflowId, json);
    }),
  );

  listCommand(job, run, {
    noun: 'job',
    workflowType: WorkflowType.agentJob,
    status: `only jobs whose AgentJobStatus is this status, as the service names it, e.g. ${STATUS_EXAMPLES}`,
    statusRule: z
      .string()
      .regex(
        /^[a-z][a-z0-9_]{0,63}$/,
        `must be a status in lowercase letters, digits and _, e.g. ${STATUS_EXAMPLES}`,
      ),
    clause: (status) => `${AgentJobStatusKey.name} = ${quoteVisibility(status)}`,
    columns: (execution) => ({ jobStatus: execution.typedSearchAttributes.get(AgentJobStatusKey) }),
    line: (r) => `${r.workflowId}  ${r.workflowStatus}  ${r.jobStatus ?? '-'}  ${r.started}`,
  });

  targeted(job.command('cancel').description("cancel a job's workflow (polling stops)")).action((flags) =>
    run(async ({ client, json }) => {
      const workflowId = workflowIdOf(flags);
      const handle = (await client()).workflow.getHandle(workflowId);
      const workflow = (await handle.describe()).status.name;
      if (workflow !== 'RUNNING') {
        const closed = `${workflowId} is already closed (${workflow}): nothing to cancel`;
        print(json, { workflowId, cancelled: false, workflow }, closed);
        return ExitCode.failed;
      }
      await handle.cancel();
      // The service has no cancel operation: its job may go on, and a follow-up can continue it later.
      print(
        json,
        { workflowId, cancelled: true },
        `cancellation requested for ${workflowId}: polling stops and the workflow ends CANCELLED (the service job itself is not cancelled: the service has no such operation)`,
      );
      return ExitCode.ok;
    }),
  );

  // Unlike `temporal workflow reset` (docs/agent-job.md, "Operating it"), only to a point that sends nothing twice.
  targeted(job.command('reset').description("reset a job's run, only to a point that sends nothing twice"))
    .addOption(
      option(
        '--to <eventId>',
        'WorkflowTaskCompleted event id to reset to (default: the latest safe one); unsafe ids are refused',
        integer(z.number().min(1, 'must be a whole event id > 0')),
      ),
    )
    .addOption(option('--reason <text>', 'why, recorded in the history', text))
    .action((flags) =>
      run(async ({ client, json }) => {
        const workflowId = workflowIdOf(flags);
        try {
          const reset = await resetAgentJob(
            await client(),
            workflowId,
            defined({ toEventId: flags.to, reason: flags.reason }),
          );
          const { toEventId, runId, resetRunId } = reset;
          print(
            json,
            { workflowId, ...reset },
            `reset ${workflowId} to event ${toEventId}: run ${runId} -> ${resetRunId}`,
          );
          return ExitCode.ok;
        } catch (error) {
          if (!(error instanceof AgentJobResetRefusedError)) throw error;
          print(
            json,
            { workflowId, refused: error.message, ...error.points },
            `reset refused: ${error.message}`,
          );
          return ExitCode.failed;
        }
      }),
    );
}

async function waitForJob(client: Client, workflowId: string, json: boolean): Promise<number> {
  // The live status is for a reader: under --json the workflow is not queried for it.
  const stop = json
    ? () => undefined
    : watch(async () => {
        const state = await getAgentJobState(client, workflowId);
        const line = [
          `job ${state.jobId ?? '(creating)'}: ${state.status}, ${state.polls} polls, ${state.pendingFollowUps} pending follow-ups`,
          ...modelAndSource(state),
        ].join('; ');
        return [line, line];
      }, 1000);
  try {
    const result = await awaitAgentJob(client, workflowId);
    stop();
    print(json, result, describeResult(result));
    return ExitCode.ok;
  } catch (error) {
    const failure = agentJobFailureOf(error);
    if (!failure) throw error;
    print(json, failure, `job ended: ${failure.type}: ${failure.message}`);
    return ExitCode.failed;
  } finally {
    stop();
  }
}

/**
 * What became of a follow-up: queued, delivered, or received before and not sent again (exit 0), or not queued or
 * of unknown outcome (exit 1, with the reason).
 */
function printReceipt(
  json: boolean,
  receipt: { workflowId: string; runId?: string; messageId: string; earlierStatus?: FollowUpStatus },
  status: FollowUpStatus = 'pending',
  reason?: string | null,
): number {
  const { messageId, earlierStatus } = receipt;
  const where =
    receipt.runId === undefined ? receipt.workflowId : `${receipt.workflowId} (run ${receipt.runId})`;
  print(
    json,
    { ...receipt, status, ...(reason ? { reason } : {}) },
    status === 'rejected'
      ? `follow-up ${messageId} not queued: ${reason ?? 'rejected'}`
      : earlierStatus !== undefined
        ? `follow-up ${messageId} was received before by ${where}: ${status}, not sent again`
        : status === 'pending'
          ? `queued for ${where} as ${messageId}`
          : `follow-up ${messageId} for ${where}: ${status}${reason ? ` (${reason})` : ''}`,
  );
  return status === 'rejected' || status === 'outcome_unknown' ? ExitCode.failed : ExitCode.ok;
}

async function followUpAndWait(
  client: Client,
  workflowId: string,
  request: { prompt: string; messageId: string },
  json: boolean,
): Promise<number> {
  const { messageId } = request;
  try {
    const job = await sendFollowUpAndWait(client, workflowId, request);
    print(json, job, `delivered: job ${job.id} is ${job.status}`);
    return ExitCode.ok;
  } catch (error) {
    const failure = followUpFailureOf(error);
    if (!failure) throw error;
    // A refused duplicate was received before: its record says what became of it, as without --wait.
    const earlier =
      failure.type === FollowUpFailureType.notAccepted
        ? await getAgentJobState(client, workflowId).then(
            (state) => recordOf(state.followUps, messageId)?.status,
            () => undefined,
          )
        : undefined;
    if (earlier !== undefined && earlier !== 'rejected') {
      return printReceipt(json, { workflowId, messageId, earlierStatus: earlier }, earlier);
    }
    print(
      json,
      { workflowId, messageId, ...failure },
      `follow-up ${messageId}: ${failure.type}: ${failure.message}`,
    );
    return ExitCode.failed;
  }
}

/** The latest record of a messageId: a follow-up refused earlier may be sent again under its id. */
function recordOf(followUps: FollowUpRecord[], messageId: string): FollowUpRecord | undefined {
  return followUps.filter((record) => record.messageId === messageId).at(-1);
}

/** The run's record of the follow-up, once the workflow has seen the signal (undefined after 10 s). */
async function receiptOf(client: Client, workflowId: string, runId: string, messageId: string) {
  const until = Date.now() + 10_000;
  for (;;) {
    // Not queryable yet (a new run's first task), or it continued as new: the signal went with it.
    const state = await client.workflow
      .getHandle(workflowId, runId)
      .query(getStateQuery)
      .catch(() => undefined);
    const record = state && recordOf(state.followUps, messageId);
    if (record || Date.now() >= until) return record;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function jobStatus(client: Client, workflowId: string, json: boolean): Promise<number> {
  const handle = client.workflow.getHandle(workflowId);
  const description = await handle.describe();
  const workflow = description.status.name;
  if (workflow === 'RUNNING') {
    const state = await getAgentJobState(client, workflowId);
    const { pollingSince, waitingForBudgetUntil: until } = state;
    const lines = [
      `job ${state.jobId ?? '(creating)'}: ${state.status}`,
      `polls: ${state.polls}, next poll: ${state.nextPollAt ?? (pollingSince ? `polling since ${pollingSince}` : '-')}`,
      ...followUpLines(state.followUps),
      state.prLink ? `pull request: ${state.prLink}` : '',
      ...modelAndSource(state),
      state.queuedForBudget ? `queued for the project's budget${until ? ` until ${until}` : ''}` : '',
      state.inFlight ? `in flight: ${state.inFlight}` : '',
      state.lastError ? `last error: ${state.lastError}` : '',
    ];
    print(json, { workflow, state }, lines.filter(Boolean).join('\n'));
    return ExitCode.ok;
  }
  try {
    const result = await awaitAgentJob(client, workflowId);
    print(json, { workflow, result }, `${workflow}\n${describeResult(result)}`);
    return ExitCode.ok;
  } catch (error) {
    // A job that failed is a status to show; anything else (e.g. a payload the CLI cannot decode) is an error.
    if (!(error instanceof WorkflowFailedError)) throw error;
    const failure = agentJobFailureOf(error);
    // Cancelled or terminated runs carry no details: the job id is in AgentJobId, or (a run terminated while
    // its create was in flight) in the job's create record.
    const record = await readCreateRecord(client, workflowId);
    const jobId = description.typedSearchAttributes.get(AgentJobIdKey) ?? record?.jobId ?? null;
    // A create the service refused (4xx) made no job; one of unknown outcome may have.
    const createSent =
      jobId === null &&
      failure?.type !== AgentJobFailureType.createRejected &&
      serviceCallsOf((await handle.fetchHistory()).events ?? []).some(
        (call) => call.type === 'createAgentJob',
      );
    const ended =
      failure?.type === AgentJobFailureType.jobNotFound ||
      (FOLLOW_UP_REFUSING_STATUSES as readonly string[]).includes(failure?.status ?? '');
    const job =
      jobId !== null
        ? ended
          ? `job ${jobId}: it takes no follow-ups; start a new job`
          : `job ${jobId} (the service job may still run: \`job message\` continues it)`
        : createSent
          ? `a create of unknown outcome was sent (run ${record?.runId ?? description.runId}): a job may exist at the service; look at the project's jobs there before starting another`
          : 'no service job was created';
    const lines = [
      `${workflow}: ${failure?.message ?? String(error)}`,
      job,
      ...followUpLines(failure?.followUps ?? []),
    ];
    print(json, { workflow, jobId, failure }, lines.join('\n'));
    return ExitCode.failed;
  }
}

function describeResult(result: AgentJobResult): string {
  const earlier = result.alreadyCreatedBy;
  return [
    earlier &&
      `already created by run ${earlier.runId} (${earlier.recordedAt}) with this prompt: not created again`,
    `job ${result.jobId}: ${result.status} after ${result.polls} polls`,
    result.prLink ? `pull request: ${result.prLink}` : 'no pull request (no files changed)',
    ...modelAndSource(result),
    ...followUpLines(result.followUps),
  ]
    .filter(Boolean)
    .join('\n');
}

/** `model: …` and `source: <repository>, branch <ref>`, each when the service gave it. */
function modelAndSource({ model, source }: Pick<AgentJob, 'model' | 'source'>): string[] {
  const lines = model === undefined ? [] : [`model: ${model}`];
  if (source !== undefined) {
    lines.push(
      `source: ${source.repository ?? '(repository not given)'}, branch ${source.ref ?? '(none given)'}`,
    );
  }
  return lines;
}

/** How many follow-ups are in each status, and which ones may have reached the service without an answer. */
function followUpLines(followUps: FollowUpRecord[]): string[] {
  if (followUps.length === 0) return [];
  const counts = FOLLOW_UP_STATUSES.flatMap((status) => {
    const count = followUps.filter((record) => record.status === status).length;
    return count === 0 ? [] : [`${count} ${status}`];
  });
  const unknown = followUps.filter((record) => record.status === 'outcome_unknown').map((r) => r.messageId);
  const lines = [`follow-ups: ${counts.join(', ')}`];
  if (unknown.length > 0) {
    lines.push(`outcome unknown (may have reached the service, not sent again): ${unknown.join(', ')}`);
  }
  return lines;
}
