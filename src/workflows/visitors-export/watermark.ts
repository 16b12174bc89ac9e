import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import {
  advanceWatermarkUpdate,
  readWatermarkUpdate,
  type NightlyWatermark,
  type NightlyWatermarkState,
} from '../../contract/nightly';
import { INVALID_INPUT_FAILURE_TYPE, InputValidationError } from '../../contract/input-error';
import { CONTINUE_AS_NEW_AFTER_EVENTS } from '../../contract/continue-as-new';
import { addDays } from '../../contract/zone-days';
import { continueAsNewOnCurrentVersion, newVersionTargeted, withVersionCheck } from '../versioning';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The nightly exports' watermark of one project and zone: the last day such that it and every day before it are
 * exported whole. Scheduled runs read it and report each day they export (updates, from activities); days
 * reported out of order wait in `done` until the gap before them closes, so the watermark never passes a day that
 * is not whole, whatever runs overlap. It never ends (continue-as-new) and mirrors its state in its memo, where
 * `schedule describe` reads it without a worker.
 */
export async function visitorsExportWatermark(initial: NightlyWatermarkState): Promise<never> {
  const state: NightlyWatermarkState = { ...initial, done: [...initial.done] };
  const view = (): NightlyWatermark => ({ watermark: state.watermark, done: [...state.done] });
  const publish = (): void => upsertMemo({ watermark: state.watermark, done: state.done });
  if (state.watermark !== null) publish();

  setHandler(
    readWatermarkUpdate,
    ({ initial: first }) => {
      if (state.watermark === null || (!state.advanced && first < state.watermark)) {
        state.watermark = first;
        closeGaps(state);
        publish();
      }
      return view();
    },
    { validator: ({ initial: first }) => checkDay('initial', first) },
  );
  setHandler(
    advanceWatermarkUpdate,
    ({ day }) => {
      state.advanced = true;
      if (state.watermark === null) state.watermark = addDays(day, -1);
      if (day > state.watermark && !state.done.includes(day)) state.done = [...state.done, day].sort();
      closeGaps(state);
      publish();
      return view();
    },
    { validator: ({ day }) => checkDay('day', day) },
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
  return continueAsNewOnCurrentVersion<typeof visitorsExportWatermark>(state);
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
}

/** An update validator's check: a bad day rejects the update (InvalidInput) before it enters history. */
function checkDay(field: string, day: unknown): void {
  if (typeof day === 'string' && DAY.test(day)) return;
  const { message } = new InputValidationError(
    [{ field, rule: 'must be a day YYYY-MM-DD' }],
    'watermark update',
  );
  throw ApplicationFailure.nonRetryable(message, INVALID_INPUT_FAILURE_TYPE);
}
