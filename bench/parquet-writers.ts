// Which Parquet writer the export uses, by measurement: each candidate writes the same rows, page by page as the
// merge produces them, in row groups, to a local file, in a process of its own (bench/parquet-writers/
// write-one.mjs); the candidates take turns in every round so that the machine's load falls on all alike. CSV is
// the baseline. Install size is each library's installed closure (its dependencies included).
//
//   npm ci --prefix bench/parquet-writers
//   node --import tsx bench/parquet-writers.ts [--rows 1000000] [--rounds 3] [--row-group 10000] [--record]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { machine, markdownTable, recordSection } from './lib/report';
import { median, spread } from './lib/stats';

const HERE = path.join(__dirname, 'parquet-writers');
const MODULES = path.join(HERE, 'node_modules');

interface Candidate {
  label: string;
  candidate: 'csv' | 'hyparquet' | 'parquetjs' | 'parquet-wasm' | 'duckdb';
  codec: string;
  rowGroup?: number;
  /** The packages whose installed closure it costs. */
  packages: string[];
}

interface Measurement {
  seconds: number;
  peakGrowthMiB: number;
  bytes: number;
}

function candidates(rowGroup: number): Candidate[] {
  const list: Candidate[] = [
    { label: 'CSV (baseline)', candidate: 'csv', codec: 'NONE', packages: [] },
    {
      label: 'hyparquet-writer snappy',
      candidate: 'hyparquet',
      codec: 'SNAPPY',
      packages: ['hyparquet-writer'],
    },
    ...[0.25, 2.5, 10].map((scale) => ({
      label: `hyparquet-writer snappy, groups of ${rowGroup * scale}`,
      candidate: 'hyparquet' as const,
      codec: 'SNAPPY',
      rowGroup: rowGroup * scale,
      packages: ['hyparquet-writer'],
    })),
    {
      label: '@dsnp/parquetjs snappy',
      candidate: 'parquetjs',
      codec: 'SNAPPY',
      packages: ['@dsnp/parquetjs'],
    },
    {
      label: 'parquet-wasm + apache-arrow zstd',
      candidate: 'parquet-wasm',
      codec: 'ZSTD',
      packages: ['parquet-wasm', 'apache-arrow'],
    },
    {
      label: 'parquet-wasm + apache-arrow snappy',
      candidate: 'parquet-wasm',
      codec: 'SNAPPY',
      packages: ['parquet-wasm', 'apache-arrow'],
    },
    { label: '@duckdb/node-api zstd', candidate: 'duckdb', codec: 'ZSTD', packages: ['@duckdb/node-api'] },
    {
      label: '@duckdb/node-api snappy',
      candidate: 'duckdb',
      codec: 'SNAPPY',
      packages: ['@duckdb/node-api'],
    },
  ];
  // Node 22.15+ compresses zstd itself; on older Node the pure-JS writer has snappy only.
  if ('zstdCompressSync' in zlib) {
    list.splice(2, 0, {
      label: 'hyparquet-writer zstd (node:zlib)',
      candidate: 'hyparquet',
      codec: 'ZSTD',
      packages: ['hyparquet-writer'],
    });
  }
  return list;
}

function measure(candidate: Candidate, rows: number, rowGroup: number, dir: string): Measurement {
  const file = path.join(dir, `${candidate.label.replace(/[^a-z0-9]+/gi, '-')}.out`);
  const input = { candidate: candidate.candidate, codec: candidate.codec, rows, rowGroup, file };
  const output = execFileSync(
    process.execPath,
    ['--expose-gc', path.join(HERE, 'write-one.mjs'), JSON.stringify(input)],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  fs.rmSync(file, { force: true });
  return JSON.parse(output.trim().split('\n').pop() ?? '{}') as Measurement;
}

/** Bytes of the packages and of everything they depend on (each installed package counted once). */
function installBytes(packages: string[]): number {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    const dir = path.join(MODULES, name);
    if (seen.has(dir) || !fs.existsSync(dir)) return;
    seen.add(dir);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) visit(dep);
  };
  packages.forEach(visit);
  const sizeOf = (entry: string): number => {
    const stat = fs.lstatSync(entry);
    if (!stat.isDirectory()) return stat.size;
    return fs.readdirSync(entry).reduce((sum, name) => sum + sizeOf(path.join(entry, name)), 0);
  };
  return [...seen].reduce((sum, dir) => sum + sizeOf(dir), 0);
}

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}

async function main(): Promise<void> {
  if (!fs.existsSync(MODULES)) throw new Error('first: npm ci --prefix bench/parquet-writers');
  const rows = flag('rows', 1_000_000);
  const rounds = flag('rounds', 3);
  const rowGroup = flag('row-group', 10_000);
  const list = candidates(rowGroup);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parquet-writers-'));
  const results = new Map<Candidate, Measurement[]>(list.map((c) => [c, []]));
  try {
    for (let round = 0; round < rounds; round += 1) {
      // Rotated each round: no candidate always runs first (cold caches) or after the same neighbour.
      for (let i = 0; i < list.length; i += 1) {
        const candidate = list[(i + round) % list.length] as Candidate;
        const measured = measure(candidate, rows, candidate.rowGroup ?? rowGroup, dir);
        results.get(candidate)?.push(measured);
        console.error(`round ${round + 1}: ${candidate.label} ${JSON.stringify(measured)}`);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const baseline = median((results.get(list[0] as Candidate) ?? []).map((m) => m.seconds));
  const table = markdownTable(
    ['writer', 'seconds', 'x CSV', 'RSS growth MiB', 'file MiB', 'bytes/row', 'install MiB'],
    list.map((candidate) => {
      const runs = results.get(candidate) ?? [];
      const seconds = runs.map((m) => m.seconds);
      const bytes = median(runs.map((m) => m.bytes));
      return [
        candidate.label,
        spread(seconds, 2),
        (median(seconds) / baseline).toFixed(2),
        spread(
          runs.map((m) => m.peakGrowthMiB),
          0,
        ),
        (bytes / 2 ** 20).toFixed(1),
        (bytes / rows).toFixed(2),
        (installBytes(candidate.packages) / 2 ** 20).toFixed(1),
      ];
    }),
  );
  const body = [
    `${rows.toLocaleString('en-US')} rows (pages of 250, as the merge reads them), row groups of ` +
      `${rowGroup.toLocaleString('en-US')} unless named, ${rounds} rounds, candidates taking turns; ` +
      'median (min-max). RSS growth: the writing process, the library loaded included.',
    '',
    '`npm ci --prefix bench/parquet-writers && node --import tsx bench/parquet-writers.ts --rows ' +
      `${rows} --rounds ${rounds} --record\``,
    '',
    machine(),
    '',
    table,
  ].join('\n');
  console.log(body);
  if (process.argv.includes('--record')) await recordSection('Parquet writers', body);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
