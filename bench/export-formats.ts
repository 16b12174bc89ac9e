// What a format costs the merge and gives its readers: the same staged rows merged as CSV, gzip CSV and Parquet by
// the merge activity in a process of its own (bench/merge-memory.ts: merge seconds, RSS growth), the file's bytes,
// and DuckDB's time to SELECT sum(total) over it (the test venv's duckdb, a fresh connection each time). The
// formats take turns in every round; CSV is the baseline. With --s3 the merges also write to moto's S3 server.
//
//   node --import tsx bench/export-formats.ts [--rows 1000000] [--rounds 3] [--s3] [--record]
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ExportCompression, ExportFormat } from '../src/contract/visitors-export';
import { startMoto, type MotoServer } from '../dev/moto';
import { testPython } from '../dev/python';
import { machine, markdownTable, recordSection } from './lib/report';
import { median, spread } from './lib/stats';
import type { MergeMemoryInput, MergeMemoryOutput } from './merge-memory';

interface Variant {
  label: string;
  format: ExportFormat;
  compression: ExportCompression;
  reader: string;
}

const VARIANTS: Variant[] = [
  { label: 'CSV (baseline)', format: 'csv', compression: 'none', reader: 'read_csv' },
  { label: 'CSV gzip', format: 'csv', compression: 'gzip', reader: 'read_csv' },
  { label: 'Parquet (snappy)', format: 'parquet', compression: 'none', reader: 'read_parquet' },
];

interface Measured {
  mergeSeconds: number;
  rssGrowthMiB: number;
  bytes: number;
  duckdbSeconds: number;
}

async function mergeStep(input: MergeMemoryInput): Promise<MergeMemoryOutput> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', path.join(__dirname, 'merge-memory.ts'), JSON.stringify(input)],
    { maxBuffer: 1 << 20, timeout: 30 * 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as MergeMemoryOutput;
}

const DUCKDB_SUM = `
import duckdb, json, sys, time
started = time.perf_counter()
total = duckdb.connect().sql(f"SELECT sum(total) FROM {sys.argv[1]}('{sys.argv[2]}')").fetchall()[0][0]
print(json.dumps({"seconds": time.perf_counter() - started, "total": total}))
`;

async function duckdbSum(reader: string, file: string): Promise<{ seconds: number; total: number }> {
  const { stdout } = await promisify(execFile)(testPython(), ['-c', DUCKDB_SUM, reader, file]);
  return JSON.parse(stdout) as { seconds: number; total: number };
}

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}

type Destination = Pick<MergeMemoryInput, 'exportDir' | 'exportS3'>;

/** Stages the rows once (chunks, as blocks stage them), then merges them in every format, round after round. */
async function measureAt(
  destination: Destination,
  rows: number,
  rounds: number,
  local: boolean,
): Promise<Map<Variant, Measured[]>> {
  const results = new Map<Variant, Measured[]>(VARIANTS.map((v) => [v, []]));
  await mergeStep({ ...destination, paths: rows, stagedAs: 'chunks', step: 'stage' });
  for (let round = 0; round < rounds; round += 1) {
    for (let i = 0; i < VARIANTS.length; i += 1) {
      const variant = VARIANTS[(i + round) % VARIANTS.length] as Variant;
      const { format, compression } = variant;
      const last = round === rounds - 1 && i === VARIANTS.length - 1;
      const merged = await mergeStep({
        ...destination,
        paths: rows,
        step: 'merge',
        format,
        compression,
        keepStaging: !last,
      });
      let bytes = Number.NaN;
      let duckdbSeconds = Number.NaN;
      if (local && merged.file !== undefined) {
        bytes = (await fs.stat(merged.file)).size;
        const sum = await duckdbSum(variant.reader, merged.file);
        duckdbSeconds = sum.seconds;
      }
      const measured = {
        mergeSeconds: merged.mergeSeconds,
        rssGrowthMiB: merged.peakMiB - merged.baselineMiB,
        bytes,
        duckdbSeconds,
      };
      results.get(variant)?.push(measured);
      console.error(
        `${local ? 'local' : 's3'} round ${round + 1}: ${variant.label} ${JSON.stringify(measured)}`,
      );
    }
  }
  return results;
}

function table(results: Map<Variant, Measured[]>, local: boolean): string {
  const base = median((results.get(VARIANTS[0] as Variant) ?? []).map((m) => m.mergeSeconds));
  const header = ['format', 'merge s', 'x CSV', 'RSS growth MiB'];
  if (local) header.push('MiB written', 'DuckDB sum(total) s');
  return markdownTable(
    header,
    VARIANTS.map((variant) => {
      const runs = results.get(variant) ?? [];
      const seconds = runs.map((m) => m.mergeSeconds);
      const row = [
        variant.label,
        spread(seconds, 2),
        (median(seconds) / base).toFixed(2),
        spread(
          runs.map((m) => m.rssGrowthMiB),
          0,
        ),
      ];
      if (local) {
        row.push(
          (median(runs.map((m) => m.bytes)) / 2 ** 20).toFixed(1),
          spread(
            runs.map((m) => m.duckdbSeconds),
            3,
          ),
        );
      }
      return row;
    }),
  );
}

async function main(): Promise<void> {
  const rows = flag('rows', 1_000_000);
  const rounds = flag('rounds', 3);
  const sections: string[] = [];
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-formats-'));
  try {
    sections.push(
      'Local directory:',
      '',
      table(await measureAt({ exportDir: dir }, rows, rounds, true), true),
    );
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
  if (process.argv.includes('--s3')) {
    const server: MotoServer = await startMoto();
    try {
      const destination = {
        exportDir: `s3://${server.bucket}/bench-formats`,
        exportS3: {
          forcePathStyle: true,
          clientConfig: { endpoint: server.url, region: 'us-east-1', credentials: server.writer },
        },
      };
      sections.push(
        '',
        "moto's S3 server:",
        '',
        table(await measureAt(destination, rows, rounds, false), false),
      );
    } finally {
      await server.stop();
    }
  }
  const body = [
    `${rows.toLocaleString('en-US')} rows staged once in chunks of 16 pages of 250, merged by the merge activity in ` +
      `a process of its own, ${rounds} rounds with the formats taking turns; median (min-max). RSS growth: the ` +
      'merging process, from its RSS after start and a GC to its peak (sampled every 50 ms); the bound is 100 MB.',
    '',
    `\`node --import tsx bench/export-formats.ts --rows ${rows} --rounds ${rounds}` +
      `${process.argv.includes('--s3') ? ' --s3' : ''} --record\``,
    '',
    machine(),
    '',
    ...sections,
  ].join('\n');
  console.log(body);
  if (process.argv.includes('--record')) await recordSection('Export formats', body);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
