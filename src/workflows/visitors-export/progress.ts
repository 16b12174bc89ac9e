import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { getProgressQuery } from '../../contract/messages';
import type { ExportProgress } from '../../contract/visitors-export';
import { clockTime } from '../budget/permits';

export type ProgressChanges = Partial<Omit<ExportProgress, 'waitingForBudgetUntil'>> & {
  /** ms since the epoch, or null when no page waits for the budget. */
  waitingForBudgetUntil?: number | null | undefined;
};

/** Answers the `getProgress` query and keeps the same numbers as the workflow's current details in the UI. */
export class ProgressReporter {
  readonly #heading: string;
  #progress: ExportProgress;

  constructor(heading: string, initial: Omit<ExportProgress, 'inFlight' | 'done'>) {
    this.#heading = heading;
    this.#progress = { ...initial, inFlight: 0, done: false };
    setHandler(getProgressQuery, () => ({ ...this.#progress }));
    this.#publish();
  }

  update(changes: ProgressChanges): void {
    const { waitingForBudgetUntil, ...counts } = changes;
    this.#progress = { ...this.#progress, ...counts };
    if (waitingForBudgetUntil === null) delete this.#progress.waitingForBudgetUntil;
    else if (waitingForBudgetUntil !== undefined) {
      this.#progress.waitingForBudgetUntil = new Date(waitingForBudgetUntil).toISOString();
    }
    this.#publish();
  }

  #publish(): void {
    const p = this.#progress;
    setCurrentDetails(
      `${this.#heading}\n\n**Pages done:** ${p.pagesDone} · **Rows:** ${p.rowsDone} · **In flight:** ${p.inFlight}` +
        (p.done ? ' · **Done**' : '') +
        (p.waitingForBudgetUntil === undefined || p.done
          ? ''
          : `\n\n**Waiting for budget** until ${clockTime(Date.parse(p.waitingForBudgetUntil))} (the organization's analytics budget is shared by every export)`),
    );
  }
}
