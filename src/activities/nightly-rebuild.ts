import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import {
  DocsProjectIdKey,
  visitorsExportWorkflowId,
  workflowIdPrefix,
  WorkflowType,
} from '../contract/names';
import type { InstantRange, NightlyWatermarkState } from '../contract/nightly';
import { addDays, rebuiltWatermark } from '../contract/zone-days';
import type { ExportDestination } from '../exports/destination';
import { wholeDaysInManifests } from '../exports/manifest-days';

// A lost nightly watermark rebuilt from what is durable: its last memo, the day exports that completed, and the
// manifests at the destination. Never from "yesterday".

/** Where a rebuild looks: the project's days of `timeZone` up to `through`. */
export interface RebuildScope {
  projectId: string;
  timeZone: string;
  /** The last day due: a new watermark starts the day before it. */
  through: string;
}

export function emptyState(projectId: string): NightlyWatermarkState {
  return {
    projectId,
    timeZone: null,
    watermark: null,
    done: [],
    failed: [],
    bridge: null,
    closed: null,
    origin: null,
  };
}

/** The state a watermark mirrored in its memo; undefined when the memo is missing or not one. */
export function stateFromMemo(
  memo: Record<string, unknown> | undefined,
  projectId: string,
): NightlyWatermarkState | undefined {
  if (memo === undefined) return undefined;
  const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
  const days = Array.isArray(memo.done) ? memo.done.filter((d): d is string => typeof d === 'string') : [];
  const failed = Array.isArray(memo.failed)
    ? (memo.failed as unknown[]).filter(
        (f): f is { day: string; error: string } =>
          typeof f === 'object' && f !== null && typeof (f as { day?: unknown }).day === 'string',
      )
    : [];
  const bridge = memo.bridge as InstantRange | null | undefined;
  const closed = memo.closed as NightlyWatermarkState['closed'] | undefined;
  return {
    projectId,
    timeZone: text(memo.timeZone),
    watermark: text(memo.watermark),
    done: days,
    failed,
    bridge: bridge ?? null,
    closed: closed ?? null,
    origin: text(memo.origin),
  };
}

/**
 * Adds the days of the zone exported whole to a state being rebuilt: those whose export completed under the day's
 * own id (found through visibility) and those whose manifest at the destination says so (the executions may be
 * gone: deleted, past retention). Without a watermark of the zone, the watermark is rebuilt from those days alone.
 */
export async function withCompletedDays(
  client: Client,
  destination: ExportDestination,
  state: NightlyWatermarkState,
  scope: RebuildScope,
): Promise<{ state: NightlyWatermarkState; warnings: string[] }> {
  if (state.timeZone !== null && state.timeZone !== scope.timeZone) return { state, warnings: [] };
  const manifests = await wholeDaysInManifests(destination, {
    projectId: scope.projectId,
    timeZone: scope.timeZone,
    after: state.watermark,
    through: scope.through,
  });
  const { warnings } = manifests;
  if (warnings.length > 0) {
    const { log } = Context.current();
    log.warn('Manifests skipped rebuilding the nightly watermark', { projectId: scope.projectId, warnings });
  }
  const found: string[] = [...manifests.days];
  const prefix = `${workflowIdPrefix.visitorsExport}/${scope.projectId}/`;
  const query =
    `WorkflowType = '${WorkflowType.visitorsExport}' AND ${DocsProjectIdKey.name} = '${scope.projectId}' ` +
    `AND ExecutionStatus = 'Completed'`;
  for await (const execution of client.workflow.list({ query })) {
    const dayOf = /^(\d{4}-\d{2}-\d{2})_/.exec(execution.workflowId.slice(prefix.length))?.[1];
    if (dayOf === undefined || dayOf > scope.through) continue;
    const expected = visitorsExportWorkflowId(scope.projectId, dayOf, addDays(dayOf, 1), scope.timeZone);
    if (execution.workflowId === expected) found.push(dayOf);
  }
  if (state.watermark !== null) {
    const watermark = state.watermark;
    const done = [...new Set([...state.done, ...found.filter((day) => day > watermark)])].sort();
    return { state: { ...state, timeZone: scope.timeZone, done }, warnings };
  }
  const rebuilt = rebuiltWatermark(found);
  return {
    state: { ...state, timeZone: rebuilt.watermark === null ? null : scope.timeZone, ...rebuilt },
    warnings,
  };
}
