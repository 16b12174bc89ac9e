import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  advanceWatermarkUpdate,
  NIGHTLY_WATERMARK_WORKFLOW_TYPE,
  nightlyWatermarkWorkflowId,
  readWatermarkUpdate,
  type NightlyReport,
  type NightlyWatermark,
  type NightlyWatermarkState,
} from '../contract/nightly';
import { addDays, dayBefore, dueDays } from '../contract/zone-days';

export interface NightlyPlanRequest {
  projectId: string;
  /** The input's zone; absent: the schedule's own zone (read from the schedule), else UTC. */
  timeZone?: string;
  scheduleId?: string;
  /** The run's nominal time, ISO 8601. */
  nominalTime: string;
  maxDays: number;
}

export interface NightlyPlan {
  timeZone: string;
  timeZoneFrom: NightlyReport['timeZoneFrom'];
  through: string;
  watermark: string | null;
  /** Days to export now, oldest first (days already done after a gap are left out). */
  days: string[];
  /** Days due past the cap. */
  remaining: number;
}

export interface WatermarkAdvance {
  projectId: string;
  timeZone: string;
  day: string;
}

/**
 * The nightly runs' side of the watermark workflow (`visitorsExportWatermark`, one per project and zone), which
 * they reach through the Temporal client: workflow code cannot update another workflow.
 */
export function createNightlyActivities() {
  return {
    /** The zone, the last day due, and the days a scheduled run exports now (reading the watermark). */
    async planNightlyExport(request: NightlyPlanRequest): Promise<NightlyPlan> {
      const { client, info } = Context.current();
      const { timeZone, timeZoneFrom } = await zoneOf(request);
      const through = dayBefore(new Date(request.nominalTime), timeZone);
      const initial: NightlyWatermarkState = {
        projectId: request.projectId,
        timeZone,
        watermark: null,
        done: [],
        advanced: false,
      };
      const current: NightlyWatermark = await client.workflow.executeUpdateWithStart(readWatermarkUpdate, {
        args: [{ initial: addDays(through, -1) }],
        startWorkflowOperation: new WithStartWorkflowOperation(NIGHTLY_WATERMARK_WORKFLOW_TYPE, {
          workflowId: nightlyWatermarkWorkflowId(request.projectId, timeZone),
          taskQueue: info.taskQueue,
          args: [initial],
          workflowIdConflictPolicy: 'USE_EXISTING',
          staticSummary: `Nightly export watermark of ${request.projectId} in ${timeZone}`,
        }),
      });
      const due = dueDays(current.watermark, through, request.maxDays, current.done);
      return {
        timeZone,
        timeZoneFrom,
        through,
        watermark: current.watermark,
        days: due.days,
        remaining: due.remaining,
      };
    },

    /** Records a day exported whole; returns the watermark after it. */
    async advanceNightlyWatermark(advance: WatermarkAdvance): Promise<NightlyWatermark> {
      const handle = Context.current().client.workflow.getHandle(
        nightlyWatermarkWorkflowId(advance.projectId, advance.timeZone),
      );
      return handle.executeUpdate(advanceWatermarkUpdate, { args: [{ day: advance.day }] });
    },

    /** The status of a day's export that could not be started because its id is taken ('COMPLETED', 'RUNNING'…). */
    async dayExportStatus(workflowId: string): Promise<string> {
      const description = await Context.current().client.workflow.getHandle(workflowId).describe();
      return description.status.name;
    },
  };
}

async function zoneOf(
  request: NightlyPlanRequest,
): Promise<{ timeZone: string; timeZoneFrom: NightlyReport['timeZoneFrom'] }> {
  if (request.timeZone !== undefined) return { timeZone: request.timeZone, timeZoneFrom: 'input' };
  if (request.scheduleId !== undefined) {
    const schedule = await Context.current().client.schedule.getHandle(request.scheduleId).describe();
    if (schedule.spec.timezone !== undefined && schedule.spec.timezone !== '') {
      return { timeZone: schedule.spec.timezone, timeZoneFrom: 'schedule' };
    }
  }
  return { timeZone: 'UTC', timeZoneFrom: 'default' };
}
