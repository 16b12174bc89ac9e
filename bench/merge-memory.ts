// A child process of the object-storage benchmark: stages `paths` rows as pages of 250 at the destination, then
// runs the merge activity itself and reports the RSS it grew by. Run with --expose-gc, its one argument JSON.
// With `step`, a process stages only (`stage`) and another merges only (`merge`): the merging process's RSS then
// owes nothing to the staging (whose buffers, once freed, a heap keeps and a merge would reuse).
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createVisitorsExportActivities,
  type MergeRequest,
  type MergeResult,
} from '../src/activities/visitors-export';
import { DocsApiClient } from '../src/docs-api/client';
import { ExportStaging } from '../src/exports/destination';
import { openExportDestination, type S3DestinationOptions } from '../src/exports/s3-destination';
import type { ExportCompression, ExportFormat } from '../src/contract/visitors-export';
import { memoryOf } from './lib/process-stats';
import { mergeRequestFor, stageRows, type StagedAs } from './lib/staged-export';

export interface MergeMemoryInput {
  exportDir: string;
  exportS3?: S3DestinationOptions;
  paths: number;
  /** One-page chunks (the default) or chunks of 16 pages (see StagedAs). */
  stagedAs?: StagedAs;
  /** Only stage (the staging is left for a `merge` process), or only merge; both in one process by default. */
  step?: 'stage' | 'merge';
  /** The export file's format (default csv) and EXPORT_COMPRESSION. */
  format?: ExportFormat;
  compression?: ExportCompression;
  /** Leave the staging in place after the merge, for another merge of the same rows. */
  keepStaging?: boolean;
}

export interface MergeMemoryOutput {
  rows: number;
  baselineMiB: number;
  peakMiB: number;
  stageSeconds: number;
  mergeSeconds: number;
  /** The export file's location and bytes (from its manifest entry). */
  file?: string;
}

const EXPORT_KEY = 'bench/merge-memory';

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? '{}') as MergeMemoryInput;
  const destination = openExportDestination(input.exportDir, input.exportS3);
  const staging = new ExportStaging(destination, EXPORT_KEY);
  const stageStarted = performance.now();
  if (input.step !== 'merge') await stageRows(staging, input.paths, input.stagedAs);
  const stageSeconds = (performance.now() - stageStarted) / 1000;
  if (input.step === 'stage') {
    const staged: MergeMemoryOutput = { rows: 0, baselineMiB: 0, peakMiB: 0, stageSeconds, mergeSeconds: 0 };
    process.stdout.write(`${JSON.stringify(staged)}\n`);
    return;
  }

  const activities = createVisitorsExportActivities({
    // The merge sends nothing to the service; the client is never used.
    docsApi: new DocsApiClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'bench_unused' }),
    exportDir: input.exportDir,
    ...(input.exportS3 ? { exportS3: input.exportS3 } : {}),
    exportCompression: input.compression,
  });
  globalThis.gc?.();
  const baselineMiB = memoryOf(process.pid).rssMiB;
  let peakMiB = baselineMiB;
  const sampler = setInterval(() => (peakMiB = Math.max(peakMiB, memoryOf(process.pid).rssMiB)), 50);
  const mergeStarted = performance.now();
  const request = mergeRequestFor(EXPORT_KEY, input.paths, input.format);
  const merged: MergeResult = await new MockActivityEnvironment().run(
    (r: MergeRequest) => activities.mergeVisitorsExport(r),
    request,
  );
  const mergeSeconds = (performance.now() - mergeStarted) / 1000;
  clearInterval(sampler);
  peakMiB = Math.max(peakMiB, memoryOf(process.pid).rssMiB);
  if (!input.keepStaging) await staging.remove();
  const output: MergeMemoryOutput = {
    rows: merged.rows,
    baselineMiB,
    peakMiB,
    stageSeconds,
    mergeSeconds,
    ...(merged.files[0] === undefined ? {} : { file: merged.files[0] }),
  };
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
