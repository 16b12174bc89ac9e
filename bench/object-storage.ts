import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../src/contract/names';
import { visitorsExport } from '../src/workflows';
import { startMoto, type MotoServer } from '../dev/moto';
import { startProcessStack, type ProcessStack } from '../dev/stack';
import { startWorkerProcess, type WorkerProcess } from '../dev/worker-process';
import { workflowBundlePath } from '../dev/workflow-bundle';
import { exportProfile, type ExportProfile } from './export-profile';
import { historyChain } from './lib/history';
import { cpuSecondsOf } from './lib/process-stats';
import { markdownTable } from './lib/report';
import { median, spread } from './lib/stats';
import type { MergeMemoryInput, MergeMemoryOutput } from './merge-memory';
import type { StagedAs } from './lib/staged-export';
import { countCsvRows } from './plain-export';

export interface ObjectStorageOptions {
  paths: number;
  latencyMs: number;
  concurrency: number;
  repeats: number;
  /** Paths of the merge whose memory is measured. */
  mergePaths: number;
}

export const FULL_OBJECT_STORAGE: ObjectStorageOptions = {
  paths: 100_000,
  latencyMs: 50,
  concurrency: 8,
  repeats: 3,
  mergePaths: 1_000_000,
};
export const QUICK_OBJECT_STORAGE: ObjectStorageOptions = {
  paths: 5_000,
  latencyMs: 50,
  concurrency: 8,
  repeats: 1,
  mergePaths: 50_000,
};

export const TARGET_RATIO = 1.2;
export const TARGET_RSS_GROWTH_MIB = 100;
const PAGE_SIZE = 250;
const S3_QUEUE = 'bench-object-storage';
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

export interface ObjectStorageResult {
  options: ObjectStorageOptions;
  localSeconds: number[];
  s3Seconds: number[];
  /** CPU seconds moto's process spent during each S3 export. */
  motoCpuSeconds: number[];
  /** CPU seconds the exporting worker process spent during each export. */
  workerCpuSeconds: { local: number[]; s3: number[] };
  /** Where each export's time went, from its history. */
  profiles: { local: ExportProfile[]; s3: ExportProfile[] };
  rows: { local: number[]; s3: number[] };
  /** The merge of `mergePaths` rows to each destination, from page objects and from chunks. */
  merges: { destination: string; stagedAs: StagedAs; output: MergeMemoryOutput }[];
}

const moto = { bucket: 'exports', prefix: 'bench' };

function s3Env(server: MotoServer): Record<string, string> {
  return {
    EXPORT_DIR: `s3://${server.bucket}/${moto.prefix}`,
    EXPORT_S3_FORCE_PATH_STYLE: 'true',
    AWS_ENDPOINT_URL_S3: server.url,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: server.writer.accessKeyId,
    AWS_SECRET_ACCESS_KEY: server.writer.secretAccessKey,
  };
}

/**
 * The same export (CSV, pages of 250, latency on every page) by a worker exporting to a local directory and
 * by one exporting to moto's S3 server, interleaved in every repeat on one dev server and simulator; then the
 * merge of `mergePaths` staged rows in a process of its own, to each destination, with its RSS growth.
 */
export async function objectStorage(options: ObjectStorageOptions): Promise<ObjectStorageResult> {
  const server = await startMoto(moto.bucket);
  let stack: ProcessStack | undefined;
  let s3Worker: WorkerProcess | undefined;
  const client = new S3Client({
    endpoint: server.url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: server.writer,
  });
  try {
    stack = await startProcessStack({ name: 'bench-object-storage' });
    s3Worker = startWorkerProcess({
      temporalAddress: stack.env.address,
      service: stack.sim,
      env: {
        TEMPORAL_TASK_QUEUE: S3_QUEUE,
        WORKER_WORKFLOW_BUNDLE: await workflowBundlePath(),
        ...s3Env(server),
      },
    });
    await s3Worker.ready;
    stack.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: options.latencyMs });
    const result: ObjectStorageResult = {
      options,
      localSeconds: [],
      s3Seconds: [],
      motoCpuSeconds: [],
      workerCpuSeconds: { local: [], s3: [] },
      profiles: { local: [], s3: [] },
      rows: { local: [], s3: [] },
      merges: [],
    };
    for (let repeat = 0; repeat < options.repeats; repeat += 1) {
      for (const where of ['local', 's3'] as const) {
        const projectId = `bench-storage-${where}-${repeat}`;
        stack.sim.configureProject(projectId, { visitorPaths: options.paths });
        const workerPid = (where === 'local' ? stack.worker.child.pid : s3Worker.child.pid) ?? 0;
        const workerCpu = cpuSecondsOf(workerPid);
        const started = performance.now();
        const motoCpu = server.pid === undefined ? 0 : cpuSecondsOf(server.pid);
        const workflowId = visitorsExportWorkflowId(projectId, RANGE.dateFrom, RANGE.dateTo);
        const exported = await stack.client.workflow.execute(visitorsExport, {
          taskQueue: where === 'local' ? DEFAULT_TASK_QUEUE : S3_QUEUE,
          workflowId,
          args: [
            { projectId, ...RANGE, pageSize: PAGE_SIZE, concurrency: options.concurrency, format: 'csv' },
          ],
        });
        (where === 'local' ? result.localSeconds : result.s3Seconds).push(
          (performance.now() - started) / 1000,
        );
        if (where === 's3' && server.pid !== undefined) {
          result.motoCpuSeconds.push(cpuSecondsOf(server.pid) - motoCpu);
        }
        result.workerCpuSeconds[where].push(cpuSecondsOf(workerPid) - workerCpu);
        const chain = await historyChain(stack.client, workflowId);
        result.profiles[where].push(exportProfile(chain.events, chain.runs));
        const file = exported.files[0] ?? '';
        const text =
          where === 'local'
            ? await fs.readFile(file, 'utf8')
            : await (
                await client.send(
                  new GetObjectCommand({
                    Bucket: server.bucket,
                    Key: file.slice(`s3://${server.bucket}/`.length),
                  }),
                )
              ).Body?.transformToString('utf8');
        result.rows[where].push(countCsvRows(text ?? ''));
      }
    }
    await s3Worker.kill('SIGTERM');
    s3Worker = undefined;
    const s3Merge = {
      exportS3: {
        forcePathStyle: true,
        clientConfig: { endpoint: server.url, region: 'us-east-1', credentials: server.writer },
      },
    };
    // One-page chunks are what a run stages when its writes keep pace with its pages; full chunks, slow writes.
    for (const stagedAs of ['pages', 'chunks'] as const) {
      const localDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-merge-'));
      try {
        const local = await mergeMemory({ exportDir: localDir, paths: options.mergePaths, stagedAs });
        result.merges.push({ destination: 'local directory', stagedAs, output: local });
      } finally {
        await fs.rm(localDir, { recursive: true, force: true });
      }
      const s3 = await mergeMemory({
        exportDir: `s3://${server.bucket}/merge`,
        ...s3Merge,
        paths: options.mergePaths,
        stagedAs,
      });
      result.merges.push({ destination: 'object storage (moto)', stagedAs, output: s3 });
    }
    return result;
  } finally {
    client.destroy();
    await s3Worker?.kill('SIGTERM');
    await stack?.stop();
    await server.stop();
  }
}

/** Stages in one process, merges in another: the merge's RSS growth is its own (see merge-memory.ts). */
async function mergeMemory(input: MergeMemoryInput): Promise<MergeMemoryOutput> {
  const staged = await mergeMemoryStep({ ...input, step: 'stage' });
  const merged = await mergeMemoryStep({ ...input, step: 'merge' });
  return { ...merged, stageSeconds: staged.stageSeconds };
}

async function mergeMemoryStep(input: MergeMemoryInput): Promise<MergeMemoryOutput> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', path.join(__dirname, 'merge-memory.ts'), JSON.stringify(input)],
    { maxBuffer: 1 << 20, timeout: 30 * 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as MergeMemoryOutput;
}

const ratios = (values: number[], base: number[]) =>
  values.map((value, i) => value / (base[i] ?? Number.NaN));

export function objectStorageTables(result: ObjectStorageResult): string {
  const { options } = result;
  const exportTable = markdownTable(
    ['destination', 'wall (s)', 'vs local directory', 'rows written'],
    [
      [
        'local directory (`EXPORT_DIR=/tmp/…`)',
        spread(result.localSeconds, 2),
        '1.00',
        median(result.rows.local),
      ],
      [
        'object storage (`EXPORT_DIR=s3://exports/bench`, moto)',
        spread(result.s3Seconds, 2),
        spread(ratios(result.s3Seconds, result.localSeconds), 2),
        median(result.rows.s3),
      ],
    ],
  );
  const ratio = median(ratios(result.s3Seconds, result.localSeconds));
  const phaseRow = (name: string, profiles: ExportProfile[], cpu: number[]) => [
    name,
    spread(
      profiles.map((p) => p.pagesMs / 1000),
      2,
    ),
    spread(
      profiles.map((p) => p.mergeMs / 1000),
      2,
    ),
    spread(
      profiles.map((p) => (p.startMs + p.finishMs) / 1000),
      2,
    ),
    spread(cpu, 2),
  ];
  const phaseTable = markdownTable(
    ['destination', 'pages (s)', 'merge (s)', 'start and finish (s)', 'worker CPU (s)'],
    [
      phaseRow('local directory', result.profiles.local, result.workerCpuSeconds.local),
      phaseRow('object storage (moto)', result.profiles.s3, result.workerCpuSeconds.s3),
    ],
  );
  const mergeTable = markdownTable(
    [
      'destination',
      'staged as',
      'rows',
      'staging (s)',
      'merge (s)',
      'RSS before (MiB)',
      'RSS peak (MiB)',
      'growth (MiB)',
    ],
    result.merges.map(({ destination, stagedAs, output: m }) => [
      destination,
      stagedAs === 'chunks' ? 'chunks of 16 pages' : 'one object a page',
      m.rows.toLocaleString('en'),
      m.stageSeconds.toFixed(1),
      m.mergeSeconds.toFixed(1),
      m.baselineMiB.toFixed(0),
      m.peakMiB.toFixed(0),
      (m.peakMiB - m.baselineMiB).toFixed(0),
    ]),
  );
  const growth = Math.max(...result.merges.map(({ output: m }) => m.peakMiB - m.baselineMiB));
  return [
    `${options.paths.toLocaleString('en')} paths in pages of ${PAGE_SIZE}, ${options.latencyMs} ms simulated latency ` +
      `on every page, \`concurrency: ${options.concurrency}\`, CSV: per repeat, interleaved, one export by a worker ` +
      `process exporting to a local directory and one by a worker process exporting to moto's S3 server ` +
      `(\`python -m moto.server\`, on the same machine), both on one dev server and simulator. ` +
      `${options.repeats} repeat(s): median (min-max); the ratio is per repeat, then the median.`,
    exportTable,
    `Where the time went (from each export's history: first page scheduled to last page completed, the merge ` +
      `activity, the rest), and the exporting worker process's CPU time:`,
    phaseTable,
    `moto's own CPU time during an S3 export: ${spread(result.motoCpuSeconds, 2)} s (median (min-max)). It is a ` +
      `Python server on the same 2 cores as the worker, the dev server and the simulator, so its requests (a ` +
      `marker check and a put per staged object, a get per staged object in the merge: a chunk of 16 pages while ` +
      `the budget has room, as here) cost this machine CPU that a remote S3 does not.`,
    `Target: object storage within ${TARGET_RATIO} x the local directory at concurrency ${options.concurrency}: ` +
      `**${ratio <= TARGET_RATIO ? 'met' : 'missed'}** (median ${ratio.toFixed(2)} x).`,
    `The merge of ${options.mergePaths.toLocaleString('en')} staged paths (${Math.ceil(options.mergePaths / PAGE_SIZE).toLocaleString('en')} ` +
      `pages), staged by one process, then merged by the \`mergeVisitorsExport\` activity in another ` +
      `(\`bench/merge-memory.ts\`): its RSS after start and a GC, and its peak (sampled every 50 ms) while the merge ` +
      `streams the pages into the export file (a multipart upload of 5 MiB parts, two in flight, for S3). Staged as ` +
      `a run stages them when its writes keep pace (one-page chunks) and when they are slow (chunks of 16 pages).`,
    mergeTable,
    `Target: the merge's RSS grows by less than ${TARGET_RSS_GROWTH_MIB} MB: ` +
      `**${growth < TARGET_RSS_GROWTH_MIB ? 'met' : 'missed'}** (${growth.toFixed(0)} MiB).`,
  ].join('\n\n');
}
