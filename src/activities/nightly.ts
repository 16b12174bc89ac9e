import { Context } from '@temporalio/activity';
import {
  WithStartWorkflowOperation,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
} from '@temporalio/client';
import { DocsProjectIdKey, WorkflowType } from '../contract/names';
import {
  nightlyWatermarkSummary,
  nightlyWatermarkWorkflowId,
  readWatermarkUpdate,
  reportDayUpdate,
  type InstantRange,
  type NightlyWatermark,
  type NightlyWatermarkState,
  type VisitorsNightlyResult,
} from '../contract/nightly';
import type { VisitorsExportResult } from '../contract/visitors-export';
import { addDays, dayBefore, dueDays } from '../contract/zone-days';
import type { ExportDestination } from '../exports/destination';
import { openExportDestination } from '../exports/open-destination';
import { whileHeartbeating } from './heartbeat';
import { emptyState, stateFromMemo, withCompletedDays, type RebuildScope } from './nightly-rebuild';
import type { VisitorsExportActivityDeps } from './visitors-export';

/** Where the day exports go: a lost watermark is rebuilt from the manifests found there too. */
export type NightlyActivityDeps = Pick<VisitorsExportActivityDeps, 'exportDir' | 'exportS3'>;

export interface NightlyPlanRequest {
  projectId: string;
  /** The input's zone; absent: the schedule's own zone (read from the schedule), else UTC. */
  timeZone?: string;
  scheduleId?: string;
  /** The run's nominal time, ISO 8601. */
  nominalTime: string;
  maxDays: number;
}

export interface NightlyPlan extends NightlyWatermark {
  timeZone: string;
  timeZoneFrom: VisitorsNightlyResult['timeZoneFrom'];
  through: string;
  /** Days to export now, oldest first: every day after the watermark not done yet, failed ones included. */
  days: string[];
  /** Days due past the cap. */
  remaining: number;
  /** Manifests skipped while rebuilding a lost watermark (absent in runs before manifests were read). */
  warnings?: string[];
}

export interface NightlyReport {
  projectId: string;
  timeZone: string;
  day?: string;
  bridge?: InstantRange;
  error?: string;
}

/** How a day's export another run started ended (or is found ended). */
export type DayExportOutcome =
  { status: 'COMPLETED'; result: VisitorsExportResult } | { status: string; error: string };

/** How long one call to the watermark may take: a watermark that does not answer fails the attempt. */
const WATERMARK_CALL_MS = 20_000;

/**
 * The nightly runs' side of the watermark workflow (`visitorsNightlyWatermark`, one per project), which they reach
 * through the Temporal client: workflow code cannot update another workflow. The watermark always runs on the
 * task queue of the run that talks to it, and is rebuilt from durable state when it is gone.
 */
export function createNightlyActivities({ exportDir, exportS3 }: NightlyActivityDeps) {
  const destination = openExportDestination(exportDir, exportS3);
  return {
    /** The zone, the last day due, and the days a nightly run exports now (reading the watermark). */
    async planNightlyExport(request: NightlyPlanRequest): Promise<NightlyPlan> {
      const { client, info } = Context.current();
      const { timeZone, timeZoneFrom } = await zoneOf(client, request);
      const through = dayBefore(new Date(request.nominalTime), timeZone);
      const { current, warnings } = await readWatermark(client, destination, {
        projectId: request.projectId,
        timeZone,
        through,
        taskQueue: info.taskQueue,
      });
      const due = dueDays(current.watermark, through, request.maxDays, current.done);
      return {
        ...current,
        timeZone,
        timeZoneFrom,
        through,
        days: due.days,
        remaining: due.remaining,
        warnings,
      };
    },

    /** Reports a day (or the bridge after a zone change) exported whole, or failed; returns the watermark after. */
    async reportNightlyDay(report: NightlyReport): Promise<NightlyWatermark> {
      const { client, info } = Context.current();
      const { projectId, ...update } = report;
      const send = (): Promise<NightlyWatermark> =>
        client.withDeadline(Date.now() + WATERMARK_CALL_MS, () =>
          client.workflow
            .getHandle(nightlyWatermarkWorkflowId(projectId))
            .executeUpdate(reportDayUpdate, { args: [update] }),
        );
      try {
        return await send();
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        // Terminated while this run exported: rebuilt where this run is, then told.
        const through = report.day ?? dayBefore(new Date(), report.timeZone);
        await readWatermark(client, destination, {
          projectId,
          timeZone: report.timeZone,
          through,
          taskQueue: info.taskQueue,
        });
        return send();
      }
    },

    /** Waits for a day's export that another run (or a backfill) started under the day's id, heartbeating. */
    async awaitDayExport(workflowId: string): Promise<DayExportOutcome> {
      const handle = Context.current().client.workflow.getHandle(workflowId);
      try {
        const result = (await whileHeartbeating(() => handle.result())) as VisitorsExportResult;
        return { status: 'COMPLETED', result };
      } catch (error) {
        if (!(error instanceof WorkflowFailedError)) throw error;
        const { status } = await handle.describe();
        return { status: status.name, error: error.cause?.message ?? error.message };
      }
    },
  };
}

interface WatermarkRead extends RebuildScope {
  /** Where the watermark runs: the task queue of the run that talks to it. */
  taskQueue: string;
}

/**
 * Reads the project's watermark, starting it where it is missing. A watermark running on another task queue is
 * moved to this one (its state read from its memo, where the server keeps it without any worker), and one that is
 * gone (terminated, reset, past retention) is rebuilt from its last memo and the days exported whole (see
 * withCompletedDays); `warnings` names the manifests that rebuild skipped.
 */
async function readWatermark(
  client: Client,
  destination: ExportDestination,
  read: WatermarkRead,
): Promise<{ current: NightlyWatermark; warnings: string[] }> {
  const workflowId = nightlyWatermarkWorkflowId(read.projectId);
  let state: NightlyWatermarkState = emptyState(read.projectId);
  let running = false;
  try {
    const described = await client.workflow.getHandle(workflowId).describe();
    running = described.status.name === 'RUNNING' && described.taskQueue === read.taskQueue;
    if (!running) {
      state = stateFromMemo(described.memo, read.projectId) ?? state;
      if (described.status.name === 'RUNNING') {
        await client.workflow
          .getHandle(workflowId, described.runId)
          .terminate(`moved to task queue ${read.taskQueue}, where the nightly runs are`);
      }
    }
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  let warnings: string[] = [];
  if (!running) ({ state, warnings } = await withCompletedDays(client, destination, state, read));
  const current = await client.withDeadline(Date.now() + WATERMARK_CALL_MS, () =>
    client.workflow.executeUpdateWithStart(readWatermarkUpdate, {
      args: [{ timeZone: read.timeZone, initial: addDays(read.through, -1) }],
      startWorkflowOperation: new WithStartWorkflowOperation(WorkflowType.visitorsNightlyWatermark, {
        workflowId,
        taskQueue: read.taskQueue,
        args: [state],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: [{ key: DocsProjectIdKey, value: read.projectId }],
        staticSummary: nightlyWatermarkSummary(read.projectId),
      }),
    }),
  );
  return { current, warnings };
}

async function zoneOf(
  client: Client,
  request: NightlyPlanRequest,
): Promise<{ timeZone: string; timeZoneFrom: VisitorsNightlyResult['timeZoneFrom'] }> {
  if (request.timeZone !== undefined) return { timeZone: request.timeZone, timeZoneFrom: 'input' };
  if (request.scheduleId !== undefined) {
    const schedule = await client.schedule.getHandle(request.scheduleId).describe();
    if (schedule.spec.timezone !== undefined && schedule.spec.timezone !== '') {
      return { timeZone: schedule.spec.timezone, timeZoneFrom: 'schedule' };
    }
  }
  return { timeZone: 'UTC', timeZoneFrom: 'default' };
}
