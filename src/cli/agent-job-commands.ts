import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import {
  Option,
  type Command,
  type CommandUnknownOpts,
  type OptionValues,
} from '@commander-js/extra-typings';
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
} from '../client/agent-job';
import {
  AgentJobResetRefusedError,
  agentJobResetPoints,
  closedJobOf,
  resetAgentJob,
} from '../client/agent-job-runs';
import { defined } from '../client/schedule';
import {
  FOLLOW_UP_STATUSES,
  FollowUpFailureType,
  followUpRequestSchema,
  KNOWN_JOB_STATUSES,
  STATUS_NOT_CREATED,
  type AgentJobResult,
  type AgentJobState,
  type FollowUpRecord,
  type FollowUpStatus,
} from '../contract/agent-job';
import { getStateQuery } from '../contract/messages';
import { agentJobWorkflowId, AgentJobStatusKey, quoteVisibility, WorkflowType } from '../contract/names';
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
    .addOption(option('--prompt <text>', what, promptSchema).conflicts('promptFile'))
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
        const { initialInterval, maxInterval, deadline } = flags;
        const polling = defined({ initialInterval, maxInterval, deadline });
        const input = { projectId: flags.project, prompt: promptOf(flags), polling };
        // The rules across fields (the polling intervals' order, say) are checked before connecting too.
        const options = agentJobStartOptions(input, { key: flags.key ?? randomUUID(), taskQueue });
        const connected = await client();
        const { workflowId } = await connected.workflow.start(WorkflowType.agentJob, options);
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
        const { messageId } = request;
        if (flags.wait) {
          try {
            const answer = await sendFollowUpAndWait(connected, workflowId, request);
            print(json, answer, `delivered: job ${answer.id} is ${answer.status}`);
            return ExitCode.ok;
          } catch (error) {
            const failure = followUpFailureOf(error);
            if (!failure) throw error;
            // A refused duplicate was received before: its record says what became of it, as without --wait.
            const earlier =
              failure.type === FollowUpFailureType.notAccepted
                ? await recordOf(connected, workflowId, undefined, messageId)
                : undefined;
            if (earlier && earlier.status !== 'rejected') {
              return printReceipt(json, { workflowId, messageId, earlierStatus: earlier.status });
            }
            const refused = `follow-up ${messageId}: ${failure.type}: ${failure.message}`;
            print(json, { workflowId, messageId, ...failure }, refused);
            return ExitCode.failed;
          }
        }
        const delivery = await followUpAnyState(connected, workflowId, request, { taskQueue });
        const record =
          delivery.earlierStatus === undefined
            ? await recordOf(connected, workflowId, delivery.runId, messageId, 10_000)
            : undefined;
        return printReceipt(json, { ...delivery, messageId }, record);
      }),
    );

  targeted(job.command('status').description("show a job's live state or result")).action((flags) =>
    run(async ({ client, json }) => jobStatus(await client(), workflowIdOf(flags), json)),
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
    .addOption(new Option('--list', 'print the safe points and the creates and messages; reset nothing'))
    .action((flags) =>
      run(async ({ client, json }) => {
        const workflowId = workflowIdOf(flags);
        if (flags.list === true) {
          const { runId, safe, calls, whyUnsafe } = await agentJobResetPoints(await client(), workflowId);
          const why = safe.length === 0 ? `: ${whyUnsafe()}` : '';
          const listed = `run ${runId}: safe points: ${safe.length === 0 ? 'none' : safe.join(', ')}${why}`;
          print(json, { workflowId, runId, safe, calls }, listed);
          return ExitCode.ok;
        }
        const options = defined({ toEventId: flags.to, reason: flags.reason });
        try {
          const reset = await resetAgentJob(await client(), workflowId, options);
          const { toEventId, runId, resetRunId } = reset;
          const done = `reset ${workflowId} to event ${toEventId}: run ${runId} -> ${resetRunId}`;
          print(json, { workflowId, ...reset }, done);
          return ExitCode.ok;
        } catch (error) {
          if (!(error instanceof AgentJobResetRefusedError)) throw error;
          const refused = error.message;
          print(json, { workflowId, refused, ...error.points }, `reset refused: ${refused}`);
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
        const line = jobLines(await getAgentJobState(client, workflowId)).join('; ');
        return [line, line];
      }, 1000);
  try {
    const result = await awaitAgentJob(client, workflowId);
    print(json, result, jobLines(result).join('\n'));
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
  record?: FollowUpRecord,
): number {
  const { messageId, earlierStatus } = receipt;
  const status = earlierStatus ?? record?.status ?? 'pending';
  const reason = record?.error;
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

/**
 * The run's latest record of the follow-up (one refused earlier may be sent again under its id), looked for
 * until `ms` passed: a new run answers no query before its first task, and the signal may not be in yet.
 */
async function recordOf(
  client: Client,
  workflowId: string,
  runId: string | undefined,
  messageId: string,
  ms = 0,
): Promise<FollowUpRecord | undefined> {
  const until = Date.now() + ms;
  for (;;) {
    const state = await client.workflow
      .getHandle(workflowId, runId)
      .query(getStateQuery)
      .catch(() => undefined);
    const record = state?.followUps.filter((r) => r.messageId === messageId).at(-1);
    if (record || Date.now() >= until) return record;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function jobStatus(client: Client, workflowId: string, json: boolean): Promise<number> {
  const description = await client.workflow.getHandle(workflowId).describe();
  const workflow = description.status.name;
  if (workflow === 'RUNNING') {
    const state = await getAgentJobState(client, workflowId);
    print(json, { workflow, state }, jobLines(state).join('\n'));
    return ExitCode.ok;
  }
  try {
    const result = await awaitAgentJob(client, workflowId);
    print(json, { workflow, result }, [workflow, ...jobLines(result)].join('\n'));
    return ExitCode.ok;
  } catch (error) {
    // A job that failed is a status to show; anything else (e.g. a payload the CLI cannot decode) is an error.
    if (!(error instanceof WorkflowFailedError)) throw error;
    const failure = agentJobFailureOf(error);
    const { jobId = null, refusal } = await closedJobOf(client, workflowId, description);
    const lines = [
      `${workflow}: ${failure?.message ?? String(error)}`,
      refusal ?? `job ${jobId} (the service job may still run: \`job message\` continues it)`,
      ...followUpLines(failure?.followUps),
    ];
    print(json, { workflow, jobId, failure }, lines.join('\n'));
    return ExitCode.failed;
  }
}

/** The one text of a job: its live state while the workflow runs (one line each), or its result. */
function jobLines(job: AgentJobState | AgentJobResult): string[] {
  const state = 'deadlineAt' in job ? job : undefined;
  const { alreadyCreatedBy: earlier } = job as Partial<AgentJobResult>;
  const nextPoll = state?.nextPollAt ?? (state?.pollingSince ? `polling since ${state.pollingSince}` : '-');
  const until = state?.waitingForBudgetUntil ? ` until ${state.waitingForBudgetUntil}` : '';
  return [
    earlier &&
      `already created by run ${earlier.runId} (${earlier.recordedAt}) with this prompt: not created again`,
    `job ${job.jobId ?? '(creating)'}: ${job.status}${state ? '' : ` after ${job.polls} polls`}`,
    state && `polls: ${state.polls}, next poll: ${nextPoll}`,
    job.prLink ? `pull request: ${job.prLink}` : !state && 'no pull request (no files changed)',
    job.model !== undefined && `model: ${job.model}`,
    job.source &&
      `source: ${job.source.repository ?? '(repository not given)'}, branch ${job.source.ref ?? '(none given)'}`,
    ...followUpLines(job.followUps),
    state?.queuedForBudget && `queued for the project's budget${until}`,
    state?.inFlight && `in flight: ${state.inFlight}`,
    state?.lastError && `last error: ${state.lastError}`,
  ].filter((line): line is string => typeof line === 'string' && line !== '');
}

/** How many follow-ups are in each status, and which ones may have reached the service without an answer. */
function followUpLines(followUps: FollowUpRecord[] = []): string[] {
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
