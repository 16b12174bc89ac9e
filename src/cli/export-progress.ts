import type { Client } from '@temporalio/client';
import { getExportProgress } from '../client/visitors-export';
import type { ExportProgress } from '../contract/visitors-export';

const SPINNER = ['|', '/', '-', '\\'];
const POLL_MS = 500;

/** Where the rates start: the first progress read (an export joined midway counts only what it sees happen). */
export interface RateBase {
  atMs: number;
  pagesDone: number;
  rowsDone: number;
}

/**
 * One progress line. The total is unknown (the service only says `hasMore`), so there is no bar and no
 * percentage: pages and rows done, their rates since `rates.base` when asked, and what the export waits for.
 */
export function exportProgressLine(
  progress: ExportProgress,
  rates?: { base: RateBase; nowMs: number },
): string {
  const seconds = rates === undefined ? 0 : (rates.nowMs - rates.base.atMs) / 1000;
  const rate = (done: number, from: number): string =>
    seconds < 1 ? '-' : ((done - from) / seconds).toFixed(1);
  return [
    `pages ${progress.pagesDone}`,
    `rows ${progress.rowsDone}`,
    ...(rates === undefined
      ? []
      : [
          `${rate(progress.pagesDone, rates.base.pagesDone)} pages/s`,
          `${rate(progress.rowsDone, rates.base.rowsDone)} rows/s`,
        ]),
    `in flight ${progress.inFlight}`,
    ...(progress.waitingForBudgetUntil === undefined
      ? []
      : [`waiting for budget until ${progress.waitingForBudgetUntil}`]),
    ...(progress.destination === undefined ? [] : [`to ${progress.destination}`]),
  ].join(' · ');
}

/**
 * Shows an export's progress until `stop()`: on a terminal, one line redrawn in place behind a spinner that turns
 * while the export is alive; elsewhere a line per change. Nothing with --json. `stop()` ends the line.
 */
export function watchExportProgress(
  client: Client,
  workflowId: string,
  options: { json: boolean; tty: boolean },
): () => void {
  if (options.json) return () => undefined;
  let base: RateBase | undefined;
  let frame = 0;
  let last = '';
  let drawn = false;
  const timer = setInterval(() => {
    getExportProgress(client, workflowId).then(
      (progress) => {
        const now = Date.now();
        base ??= { atMs: now, pagesDone: progress.pagesDone, rowsDone: progress.rowsDone };
        const line = exportProgressLine(progress, { base, nowMs: now });
        if (options.tty) {
          frame = (frame + 1) % SPINNER.length;
          process.stdout.write(`\r\x1b[2K${SPINNER[frame]} ${line}`);
          drawn = true;
        } else {
          // A new line when the export moved, not for each new rate.
          const counts = JSON.stringify(progress);
          if (counts === last) return;
          last = counts;
          process.stdout.write(`${line}\n`);
        }
      },
      () => undefined,
    );
  }, POLL_MS);
  return () => {
    clearInterval(timer);
    if (drawn) process.stdout.write('\n');
    drawn = false;
  };
}
