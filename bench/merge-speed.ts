// How long the `mergeVisitorsExport` activity takes for one export's staged pages (100,000 rows as 400 pages of
// 250 by default), to a local directory or, with --s3, to moto's S3 server. The pages are staged once with the
// real ExportStaging, then the activity runs (through MockActivityEnvironment) once to warm up and `--runs`
// times measured.
//
//   node --import tsx bench/merge-speed.ts [--s3] [--rows N] [--runs N] [--against <checkout>] [--chunks]
//
// --chunks stages the rows in chunks of 16 pages (a run whose writes are slow) instead of one-page chunks. Another
// checkout older than one-format staging reads neither: compare against one that stages chunks only.
//
// --against names another checkout of this repository (say `git worktree add --detach ../base main`, with a
// node_modules of its own or linked to this one): its merge runs interleaved with this one's, on the same staged
// pages, so that both medians come from one run of a shared, noisy machine, and both must write the same bytes.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { startMoto, type MotoServer } from '../dev/moto';
import type * as VisitorsExport from '../src/activities/visitors-export';
import type {
  MergeRequest,
  MergeResult,
  VisitorsExportActivityDeps,
} from '../src/activities/visitors-export';
import { DocsApiClient } from '../src/docs-api/client';
import { openExportDestination, type S3DestinationOptions } from '../src/exports/s3-destination';
import { ExportStaging } from '../src/exports/destination';
import { mergeRequestFor, stageRows } from './lib/staged-export';
import { median } from './lib/stats';

const EXPORT_KEY = 'bench/merge-speed';
const CHUNKED_KEY = 'bench/merge-speed-chunks';

type Merge = (request: MergeRequest) => Promise<MergeResult>;

interface Candidate {
  name: string;
  merge: Merge;
  request: MergeRequest;
  seconds: number[];
  sha256?: string;
}

/** The merge activity of the checkout at `root` (this one's `src/` unless --against names another). */
async function mergeActivityOf(
  root: string,
  deps: Omit<VisitorsExportActivityDeps, 'docsApi'>,
): Promise<Merge> {
  // Another checkout's module: the same shape as this one's (a checkout of this repository).
  const module = (await import(
    path.join(root, 'src/activities/visitors-export.ts')
  )) as typeof VisitorsExport;
  const activities = module.createVisitorsExportActivities({
    // The merge sends nothing to the service; the client is never used.
    docsApi: new DocsApiClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'bench_unused' }),
    ...deps,
  });
  return (request) =>
    new MockActivityEnvironment().run((r: MergeRequest) => activities.mergeVisitorsExport(r), request);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      s3: { type: 'boolean', default: false },
      rows: { type: 'string', default: '100000' },
      runs: { type: 'string', default: '5' },
      against: { type: 'string' },
      chunks: { type: 'boolean', default: false },
    },
  });
  const paths = Number(values.rows);
  const runs = Number(values.runs);
  if (!Number.isInteger(paths) || paths < 1)
    throw new Error(`--rows must be a whole number ≥ 1, not ${values.rows}`);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs must be a whole number ≥ 1, not ${values.runs}`);
  const local = await fs.mkdtemp(path.join(os.tmpdir(), 'merge-speed-'));
  let server: MotoServer | undefined;
  try {
    let exportDir = local;
    let exportS3: S3DestinationOptions | undefined;
    if (values.s3) {
      server = await startMoto('exports');
      exportDir = `s3://${server.bucket}/merge-speed`;
      exportS3 = {
        forcePathStyle: true,
        clientConfig: { endpoint: server.url, region: 'us-east-1', credentials: server.writer },
      };
    }
    const deps = { exportDir, ...(exportS3 ? { exportS3 } : {}) };
    const staging = new ExportStaging(openExportDestination(exportDir, exportS3), EXPORT_KEY);
    await stageRows(staging, paths);
    const chunked = new ExportStaging(openExportDestination(exportDir, exportS3), CHUNKED_KEY);
    if (values.chunks) await stageRows(chunked, paths, 'chunks');

    const candidates: Candidate[] = [
      {
        name: `this checkout${values.chunks ? ' (chunks)' : ''}`,
        merge: await mergeActivityOf(path.join(__dirname, '..'), deps),
        request: mergeRequestFor(values.chunks ? CHUNKED_KEY : EXPORT_KEY, paths),
        seconds: [],
      },
    ];
    if (values.against) {
      const root = path.resolve(values.against);
      const merge = await mergeActivityOf(root, deps);
      candidates.unshift({ name: root, merge, request: mergeRequestFor(EXPORT_KEY, paths), seconds: [] });
    }
    for (let run = 0; run <= runs; run += 1) {
      for (const candidate of candidates) {
        const started = performance.now();
        const merged = await candidate.merge(candidate.request);
        const seconds = (performance.now() - started) / 1000;
        if (merged.rows !== paths) throw new Error(`${candidate.name}: ${merged.rows} rows, not ${paths}`);
        if (candidate.sha256 !== undefined && candidate.sha256 !== merged.sha256) {
          throw new Error(`${candidate.name}: the sha256 changed between runs`);
        }
        candidate.sha256 = merged.sha256;
        // Run 0 warms up (JIT, the SDK's connections): not counted.
        if (run > 0) candidate.seconds.push(seconds);
      }
    }
    const hashes = new Set(candidates.map((candidate) => candidate.sha256));
    if (hashes.size !== 1) throw new Error(`the checkouts wrote different files: ${[...hashes].join(', ')}`);
    const base = candidates[0]?.seconds ?? [];
    for (const candidate of candidates) {
      const ms = candidate.seconds.map((s) => s * 1000);
      const ratios = candidate.seconds.map((s, i) => s / (base[i] ?? Number.NaN));
      process.stdout.write(
        `${values.s3 ? 's3 (moto)' : 'local'}  ${candidate.name}: ${paths} rows, merge median ${median(ms).toFixed(0)} ms ` +
          `(${ms.map((m) => m.toFixed(0)).join(', ')}), ${((median(ms) * 1000) / paths).toFixed(2)} µs/row` +
          (values.against ? `, vs ${candidates[0]?.name}: ${median(ratios).toFixed(2)}` : '') +
          `, sha256 ${candidate.sha256?.slice(0, 12)}\n`,
      );
    }
    await staging.remove();
    await chunked.remove();
  } finally {
    await server?.stop();
    await fs.rm(local, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
