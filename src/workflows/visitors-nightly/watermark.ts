import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import {
  nightlyWatermarkSummary,
  readWatermarkUpdate,
  reportDayUpdate,
  type NightlyWatermark,
  type NightlyWatermarkState,
} from '../../contract/nightly';
import { INVALID_INPUT_FAILURE_TYPE, InputValidationError } from '../../contract/input-error';
import { CONTINUE_AS_NEW_AFTER_EVENTS } from '../../contract/continue-as-new';
import { addDays, carryOver } from '../../contract/zone-days';
import { continueAsNewOnCurrentVersion, newVersionTargeted, withVersionCheck } from '../versioning';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The nightly export's watermark of one project: the zone of its days and the last day such that it and every
 * day before it are exported whole. Nightly runs read it and report each day (updates, from activities on the
 * task queue of the run); days reported out of order wait in `done` until the gap before them closes, so the
 * watermark never passes a day that is not whole, whatever runs overlap. A read in another zone closes the old
 * zone's coverage and carries it over by instant. It never ends (continue-as-new) and mirrors its whole state in
 * its memo: `schedule describe` reads it without a worker, and a run rebuilds it from there if it is terminated.
 */
export async function visitorsNightlyWatermark(initial: NightlyWatermarkState): Promise<never> {
  const state: NightlyWatermarkState = { ...initial, done: [...initial.done], failed: [...initial.failed] };
  const view = (): NightlyWatermark => {
    const { projectId: _project, ...rest } = state;
    return { ...rest, done: [...state.done], failed: [...state.failed] };
  };
  const publish = (): void => {
    upsertMemo({ ...state });
    setCurrentDetails(details(state));
  };
  publish();

  setHandler(
    readWatermarkUpdate,
    ({ timeZone, initial: first }) => {
      if (state.timeZone !== timeZone && state.timeZone !== null && state.watermark !== null) {
        const carried = carryOver(state.timeZone, state.watermark, timeZone);
        state.closed = { timeZone: state.timeZone, watermark: state.watermark };
        Object.assign(state, { timeZone, watermark: carried.watermark, origin: carried.watermark });
        Object.assign(state, { bridge: carried.bridge, done: [], failed: [] });
      } else if (state.timeZone !== timeZone || state.watermark === null) {
        Object.assign(state, { timeZone, watermark: first, origin: first, done: [], failed: [] });
      } else if (first < (state.origin ?? state.watermark)) {
        // Older nights: the days after `first` become due; those the watermark covered stay done.
        const whole = daysAfter(state.origin ?? state.watermark, state.watermark);
        state.done = [...new Set([...whole, ...state.done])].sort();
        Object.assign(state, { watermark: first, origin: first });
      }
      closeGaps(state);
      publish();
      return view();
    },
    { validator: ({ timeZone, initial: first }) => checkRead(timeZone, first) },
  );
  setHandler(
    reportDayUpdate,
    ({ timeZone, day, bridge, error }) => {
      if (timeZone !== state.timeZone) return view();
      if (bridge !== undefined) {
        if (error === undefined && state.bridge?.dateFrom === bridge.dateFrom) state.bridge = null;
      } else if (day !== undefined && state.watermark !== null && day > state.watermark) {
        state.failed = state.failed.filter((failed) => failed.day !== day);
        if (error !== undefined) state.failed = [...state.failed, { day, error }].sort(byDay);
        else if (!state.done.includes(day)) state.done = [...state.done, day].sort();
        closeGaps(state);
      }
      publish();
      return view();
    },
    { validator: ({ day }) => (day === undefined ? undefined : checkDay('day', day)) },
  );

  // Continues as new on a long history, or soon after a new Worker Deployment Version becomes current (it moves).
  const due = (): boolean =>
    workflowInfo().continueAsNewSuggested ||
    workflowInfo().historyLength >= CONTINUE_AS_NEW_AFTER_EVENTS.nightlyWatermark ||
    newVersionTargeted();
  const checkMs = withVersionCheck(undefined);
  if (checkMs === undefined) await condition(due);
  else for (let ready = false; !ready;) ready = await condition(due, checkMs);
  await condition(allHandlersFinished);
  return continueAsNewOnCurrentVersion<typeof visitorsNightlyWatermark>(state);
}

/** The watermark's current details in the UI: how far the days are whole, and what is still due after it. */
function details(state: NightlyWatermarkState): string {
  const lines = [nightlyWatermarkSummary(state.projectId)];
  if (state.watermark === null) lines.push('**Whole through:** no day yet (no nightly run has read it)');
  else {
    lines.push(
      `**Whole through:** ${state.watermark} (${state.timeZone}): it and every day before it are exported whole`,
    );
  }
  if (state.done.length > 0) {
    lines.push(
      `**Whole after a day still due:** ${state.done.join(', ')} (the watermark moves once the gap closes)`,
    );
  }
  for (const { day, error } of state.failed)
    lines.push(`**Failed:** ${day}, due again on the next run: ${error}`);
  if (state.bridge !== null) {
    lines.push(`**Zone change, still due:** ${state.bridge.dateFrom} → ${state.bridge.dateTo}`);
  }
  if (state.closed !== null) {
    lines.push(
      `**Closed:** ${state.closed.timeZone} through ${state.closed.watermark}, carried over by instant`,
    );
  }
  return lines.join('\n');
}

/** Moves the watermark over the done days that follow it directly. */
function closeGaps(state: NightlyWatermarkState): void {
  if (state.watermark === null) return;
  let next = addDays(state.watermark, 1);
  while (state.done.includes(next)) {
    state.watermark = next;
    next = addDays(next, 1);
  }
  const watermark = state.watermark;
  state.done = state.done.filter((day) => day > watermark);
  state.failed = state.failed.filter((failed) => failed.day > watermark);
}

/** The days after `from` up to and including `to`. */
function daysAfter(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = addDays(from, 1); day <= to; day = addDays(day, 1)) days.push(day);
  return days;
}

function byDay(a: { day: string }, b: { day: string }): number {
  return a.day < b.day ? -1 : a.day > b.day ? 1 : 0;
}

function checkRead(timeZone: unknown, first: unknown): void {
  checkDay('initial', first);
  if (typeof timeZone !== 'string' || timeZone === '') reject('timeZone', 'must be an IANA time zone');
}

/** An update validator's check: a bad day rejects the update (InvalidInput) before it enters history. */
function checkDay(field: string, day: unknown): void {
  if (typeof day !== 'string' || !DAY.test(day)) reject(field, 'must be a day YYYY-MM-DD');
}

function reject(field: string, rule: string): never {
  const { message } = new InputValidationError([{ field, rule }], 'watermark update');
  throw ApplicationFailure.nonRetryable(message, INVALID_INPUT_FAILURE_TYPE);
}
