import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { getProgressQuery } from '../../contract/messages';
import type { ExportProgress } from '../../contract/visitors-export';

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

  update(changes: Partial<ExportProgress>): void {
    this.#progress = { ...this.#progress, ...changes };
    this.#publish();
  }

  #publish(): void {
    const p = this.#progress;
    setCurrentDetails(
      `${this.#heading}\n\n**Pages done:** ${p.pagesDone} · **Rows:** ${p.rowsDone} · **In flight:** ${p.inFlight}` +
        (p.done ? ' · **Done**' : ''),
    );
  }
}
