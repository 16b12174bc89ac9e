import { Context } from '@temporalio/activity';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import {
  dueExports,
  memoCovered,
  NIGHTLY_LOOK_BACK_DAYS,
  type NightlyExport,
  type VisitorsNightlyResult,
} from '../contract/nightly';
import type { VisitorsExportResult } from '../contract/visitors-export';
import { addDays, dayBefore } from '../contract/zone-days';
import { openExportDestination } from '../exports/s3-destination';
import { wholeExports } from '../exports/manifest-days';
import { whileHeartbeating } from './heartbeat';
import type { VisitorsExportActivityDeps } from './visitors-export';

/** Where the exports go: the manifests there are the nightly export's record of done days. */
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

export function createNightlyActivities({ exportDir, exportS3 }: NightlyActivityDeps) {
  const destination = openExportDestination(exportDir, exportS3);
  const covering = async (projectId: string, first: string, last: string) => {
    const found = await wholeExports(destination, projectId, addDays(first, -1), addDays(last, 1));
    if (found.warnings.length > 0) {
      Context.current().log.warn('Manifests skipped', { projectId, warnings: found.warnings });
    }
    return found;
  };
  return {
    /**
     * The zone, the last day due, and the exports due (`exports` now, oldest first; `remaining` past the cap), read
     * from the whole exports at the destination; `warnings` name the manifests skipped (their hours are due).
     */
    async planNightlyExport(request: NightlyPlanRequest) {
      const { timeZone, timeZoneFrom } = await zoneOf(Context.current().client, request);
      const through = dayBefore(new Date(request.nominalTime), timeZone);
      const { covered, olderExports, warnings } = await covering(
        request.projectId,
        addDays(through, 1 - NIGHTLY_LOOK_BACK_DAYS),
        through,
      );
      const due = dueExports(covered, timeZone, through, olderExports);
      return {
        timeZone,
        timeZoneFrom,
        through,
        covered: memoCovered(covered),
        olderExports,
        exports: due.slice(0, request.maxDays),
        remaining: Math.max(0, due.length - request.maxDays),
        warnings,
      };
    },

    /**
     * Waits for an export that another run (or a backfill, a person) started under the same id, heartbeating;
     * one that completed counts only if its whole export is at the destination (it may have been removed since):
     * `{ result }`, else `{ error }`.
     */
    async awaitDayExport(workflowId: string, item: NightlyExport) {
      const handle = Context.current().client.workflow.getHandle(workflowId);
      let result: VisitorsExportResult;
      try {
        result = (await whileHeartbeating(() => handle.result())) as VisitorsExportResult;
      } catch (error) {
        if (!(error instanceof WorkflowFailedError)) throw error;
        return { error: error.cause?.message ?? error.message };
      }
      const first = item.dateFrom.slice(0, 10);
      const { covered } = await covering(result.projectId, first, first);
      const whole = covered.some((c) => c.from === item.from && c.to === item.to);
      return whole ? { result } : { error: `${workflowId} completed, but its whole export is not there` };
    },
  };
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
