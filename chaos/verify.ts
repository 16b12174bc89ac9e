import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { agentJobFailureOf } from '../src/client/agent-job';
import {
  AgentJobFailureType,
  FollowUpFailureType,
  type AgentJobResult,
  type FollowUpRecord,
} from '../src/contract/agent-job';
import type { VisitorsExportManifest, VisitorsExportResult } from '../src/contract/visitors-export';
import type { RequestLogEntry, Simulator } from '../dev/simulator';
import { retrying } from './retrying';
import type { ExportSpec, JobSpec, SentFollowUp } from './workload';

export interface Verdict {
  jobs: Record<string, number>;
  followUps: Record<string, number>;
  createsAtService: number;
  createsOutcomeUnknown: number;
  exportRows: number;
  exportsWhole: number;
  failureMessages: string[];
  violations: string[];
}

export function emptyVerdict(): Verdict {
  return {
    jobs: {},
    followUps: {},
    createsAtService: 0,
    createsOutcomeUnknown: 0,
    exportRows: 0,
    exportsWhole: 0,
    failureMessages: [],
    violations: [],
  };
}

interface JobEnd {
  /** COMPLETED, FAILED, or why the end could not be read. */
  workflow: string;
  status?: string;
  prLink?: string | null;
  failureType?: string;
  failureMessage?: string;
  followUps: FollowUpRecord[];
  /** Update ids some run of the workflow accepted (its history's UpdateAccepted events): the server's record. */
  acceptedUpdates: Set<string>;
}

/** Waits for a job's workflow to close (following continue-as-new) and reads how it ended. */
async function jobEnd(client: Client, workflowId: string, deadline: number): Promise<JobEnd> {
  const end = await closedEnd(client, workflowId, deadline);
  return { ...end, acceptedUpdates: await acceptedUpdateIds(client, workflowId, deadline) };
}

async function closedEnd(
  client: Client,
  workflowId: string,
  deadline: number,
): Promise<Omit<JobEnd, 'acceptedUpdates'>> {
  try {
    const result = await retrying(
      () => client.workflow.getHandle<() => Promise<AgentJobResult>>(workflowId).result(),
      deadline,
    );
    return {
      workflow: 'COMPLETED',
      status: result.status,
      prLink: result.prLink,
      followUps: result.followUps,
    };
  } catch (error) {
    const failure = agentJobFailureOf(error);
    if (!failure) {
      return {
        workflow: `unreadable: ${String(error)}${await openRunOf(client, workflowId)}`,
        followUps: [],
      };
    }
    return {
      workflow: 'FAILED',
      ...(failure.status === undefined ? {} : { status: failure.status }),
      failureType: failure.type,
      failureMessage: failure.message,
      followUps: failure.followUps,
    };
  }
}

/** The update ids accepted by the workflow's runs, from the last run back through continue-as-new. */
async function acceptedUpdateIds(client: Client, workflowId: string, deadline: number): Promise<Set<string>> {
  const accepted = new Set<string>();
  let runId: string | undefined;
  do {
    const { events } = await retrying(
      () => client.workflow.getHandle(workflowId, runId).fetchHistory(),
      deadline,
    );
    for (const event of events ?? []) {
      const updateId = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId;
      if (updateId) accepted.add(updateId);
    }
    runId = events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  } while (runId !== undefined);
  return accepted;
}

const processedWith = (log: readonly RequestLogEntry[], route: string, prompt: string) =>
  log.filter((r) => r.route === route && r.prompt === prompt && r.processed).length;
const faultedWith = (log: readonly RequestLogEntry[], route: string, prompt: string) =>
  log.some((r) => r.route === route && r.prompt === prompt && r.status !== 200 && r.status !== 201);

/**
 * An unknown outcome needs a cause: a fault the simulator injected on that very request, or a worker killed
 * after the call began (an activity killed mid-request cannot know whether the service acted).
 */
function unknownExplained(faulted: boolean, since: number | undefined, killTimes: number[]): boolean {
  return faulted || killTimes.some((killedAt) => since === undefined || killedAt >= since);
}

export async function verifyJobs(
  client: Client,
  sim: Simulator,
  run: { jobs: JobSpec[]; sent: SentFollowUp[]; killTimes: number[] },
  deadline: number,
  verdict: Verdict,
): Promise<void> {
  const { jobs, sent, killTimes } = run;
  const ends = await Promise.all(jobs.map((job) => jobEnd(client, job.workflowId, deadline)));
  const log = sim.requests();
  jobs.forEach((job, index) => {
    const end = ends[index] as JobEnd;
    const creates = processedWith(log, 'createJob', job.prompt);
    verdict.createsAtService += creates;
    const where = `${job.workflowId} (${job.outcome})`;
    if (end.failureType === AgentJobFailureType.createOutcomeUnknown) {
      verdict.createsOutcomeUnknown += 1;
      count(verdict.jobs, 'create outcome unknown (reported)');
      if (creates > 1) verdict.violations.push(`${where}: ${creates} jobs created`);
      if (!unknownExplained(faultedWith(log, 'createJob', job.prompt), job.startedAt, killTimes)) {
        verdict.violations.push(`${where}: outcome unknown without a fault on its create or a worker kill`);
      }
    } else {
      const expected = expectedEnd(job.outcome);
      const actual = `${end.workflow} ${end.failureType ?? end.status ?? ''}`.trim();
      count(verdict.jobs, actual);
      if (actual !== expected) verdict.violations.push(`${where}: ended ${actual}, expected ${expected}`);
      if (creates !== 1) verdict.violations.push(`${where}: ${creates} jobs created at the service`);
      if (job.outcome === 'completed' && !end.prLink) verdict.violations.push(`${where}: no PR link`);
    }
    if (end.failureMessage) verdict.failureMessages.push(end.failureMessage);
    checkFollowUps(job, end, sent, log, killTimes, verdict);
  });
}

function expectedEnd(outcome: JobSpec['outcome']): string {
  if (outcome === 'failed') return `FAILED ${AgentJobFailureType.jobFailed}`;
  return `COMPLETED ${outcome === 'archived' ? 'archived' : 'completed'}`;
}

function checkFollowUps(
  job: JobSpec,
  end: JobEnd,
  sent: SentFollowUp[],
  log: readonly RequestLogEntry[],
  killTimes: number[],
  verdict: Verdict,
): void {
  for (const followUp of sent.filter((s) => s.job === job)) {
    const where = `${job.workflowId} ${followUp.spec.messageId} (${followUp.spec.via})`;
    const records = end.followUps.filter((r) => r.messageId === followUp.spec.messageId);
    const atService = processedWith(log, 'sendMessage', followUp.spec.prompt);
    if (followUp.spec.via === 'update') {
      // The history says whether a run accepted the update (its validator passed); the caller's answer must say
      // the same, by its type.
      const acceptedByRun = end.acceptedUpdates.has(followUp.spec.messageId);
      if (acceptedByRun !== followUp.accepted) {
        verdict.violations.push(
          `${where}: ${acceptedByRun ? 'accepted by the run' : 'never accepted by a run'}, yet its caller got: ${followUp.updateOutcome ?? 'delivered'}`,
        );
      }
    }
    if (!followUp.accepted) {
      count(verdict.followUps, 'not accepted by the workflow (caller told)');
      if (records.length > 0 || atService > 0)
        verdict.violations.push(`${where}: refused yet recorded or sent`);
      continue;
    }
    const [record] = records;
    if (!record || records.length > 1) {
      verdict.violations.push(`${where}: accepted but recorded ${records.length} times`);
      continue;
    }
    count(
      verdict.followUps,
      record.status === 'pending' ? 'not sent: the job ended first (reported)' : record.status,
    );
    const allowed =
      record.status === 'delivered'
        ? atService === 1
        : record.status === 'outcome_unknown'
          ? atService <= 1 &&
            unknownExplained(
              faultedWith(log, 'sendMessage', followUp.spec.prompt),
              followUp.sentAt,
              killTimes,
            )
          : atService === 0;
    if (record.status === 'pending' && end.workflow === 'COMPLETED') {
      verdict.violations.push(`${where}: still pending when the workflow completed (lost)`);
    }
    if (!allowed) verdict.violations.push(`${where}: ${record.status} but received ${atService} times`);
    if (followUp.answer !== undefined && RECORD_OF_ANSWER[followUp.answer] !== record.status) {
      verdict.violations.push(
        `${where}: the update answered "${followUp.updateOutcome ?? followUp.answer}" but the record says ${record.status}`,
      );
    }
  }
}

/** The record an accepted update's typed answer goes with; any other answer is untyped (a violation). */
const RECORD_OF_ANSWER: Record<string, FollowUpRecord['status']> = {
  delivered: 'delivered',
  [FollowUpFailureType.rejected]: 'rejected',
  [FollowUpFailureType.outcomeUnknown]: 'outcome_unknown',
  // The run ended before sending it: the failure's details list it as pending.
  [FollowUpFailureType.notSent]: 'pending',
};

export async function verifyExports(
  client: Client,
  exports: ExportSpec[],
  deadline: number,
  verdict: Verdict,
): Promise<void> {
  for (const spec of exports) {
    const where = spec.workflowId;
    let result: VisitorsExportResult;
    try {
      result = await retrying(
        () => client.workflow.getHandle<() => Promise<VisitorsExportResult>>(spec.workflowId).result(),
        deadline,
      );
    } catch (error) {
      verdict.violations.push(
        `${where}: did not complete: ${String(error)}${await openRunOf(client, where)}`,
      );
      continue;
    }
    verdict.exportRows += result.rows;
    const file = result.files.find((f) => /visitors\.(csv|ndjson|json)$/.test(f));
    const manifestFile = result.files.find((f) => f.endsWith('manifest.json'));
    if (!file || !manifestFile) {
      verdict.violations.push(`${where}: files missing from the result: ${result.files.join(', ')}`);
      continue;
    }
    const [bytes, manifestText] = await Promise.all([fs.readFile(file), fs.readFile(manifestFile, 'utf8')]);
    const manifest = JSON.parse(manifestText) as VisitorsExportManifest;
    const rows = rowsIn(bytes.toString('utf8'), spec.format);
    const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    if (result.rows !== spec.rows || rows !== spec.rows || manifest.rows !== spec.rows) {
      verdict.violations.push(
        `${where}: ${spec.rows} rows expected; result ${result.rows}, file ${rows}, manifest ${manifest.rows}`,
      );
    } else if (sha256 !== manifest.sha256) {
      verdict.violations.push(`${where}: the file's sha256 differs from the manifest's`);
    } else {
      verdict.exportsWhole += 1;
    }
  }
}

/** What a workflow still open waits on, for the violation that names it: its pending activities and children. */
async function openRunOf(client: Client, workflowId: string): Promise<string> {
  const description = await client.workflow
    .getHandle(workflowId)
    .describe()
    .catch(() => undefined);
  if (description?.status.name !== 'RUNNING') return '';
  const activities = (description.raw.pendingActivities ?? []).map((a) =>
    [
      a.activityType?.name,
      temporal.api.enums.v1.PendingActivityState[a.state ?? 0],
      `attempt ${a.attempt ?? 0}`,
      a.lastWorkerIdentity && `worker ${a.lastWorkerIdentity}`,
      a.lastFailure?.message && `last failure: ${a.lastFailure.message}`,
    ]
      .filter(Boolean)
      .join(', '),
  );
  const children = (description.raw.pendingChildren ?? []).map((c) => `child ${c.workflowId ?? ''}`);
  const waits = [...activities, ...children];
  return `; open, ${description.historyLength} events, waiting on: ${waits.length === 0 ? 'no activity or child (a timer, a signal, the budget)' : waits.join(' | ')}`;
}

function rowsIn(text: string, format: ExportSpec['format']): number {
  if (format === 'json') return (JSON.parse(text) as unknown[]).length;
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return format === 'csv' ? lines.length - 1 : lines.length;
}

function count(tally: Record<string, number>, key: string): void {
  tally[key] = (tally[key] ?? 0) + 1;
}
