import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import type { ExportCompression, ExportFormat, VisitorRow } from '../../src/contract/visitors-export';
import { addDays } from '../../src/contract/zone-days';
import { hashedOutput } from '../../src/exports/destination';
import { openExportFile } from '../../src/exports/formats';
import { compressionFor, exportFileName, exportFolderKey } from '../../src/exports/layout';
import { LocalDestination } from '../../src/exports/local-destination';
import { readWithPython } from '../helpers/export-readers';
import { tempDir } from '../helpers/temp-dir';

// The queries of docs/visitors-export.md ("Querying the days"), run as written on a hive folder that holds days
// in every format, UTC and Paris days, range exports, a partial export and staged pages.
const DOC = path.resolve(__dirname, '../../docs/visitors-export.md');

interface Day {
  day: string;
  format: ExportFormat;
  compression?: ExportCompression;
  timeZone?: string;
}

const DAYS: Day[] = [
  { day: '2026-11-01', format: 'parquet' },
  { day: '2026-11-02', format: 'csv' },
  { day: '2026-11-03', format: 'csv', compression: 'gzip' },
  { day: '2026-11-04', format: 'ndjson' },
  { day: '2026-11-05', format: 'ndjson', compression: 'gzip' },
  { day: '2026-11-06', format: 'json' },
  { day: '2026-11-07', format: 'parquet', timeZone: 'Europe/Paris' },
  { day: '2026-11-08', format: 'csv', timeZone: 'Europe/Paris' },
];

/** A day's rows: `n` paths, one with a comma and a quote (CSV quoting), totals that tell the days apart. */
function rowsOf(n: number): VisitorRow[] {
  return Array.from({ length: n }, (_, i) => ({
    path: i === 0 ? '/docs/a, "quoted"' : `/docs/${i}`,
    human: i,
    ai: n,
    total: i + n,
  }));
}

async function write(
  destination: LocalDestination,
  folder: string,
  format: ExportFormat,
  range: { dateFrom: string; dateTo: string },
  rows: VisitorRow[],
  compression: ExportCompression = 'none',
): Promise<void> {
  const file = await destination.openFinal(
    `${folder}/${exportFileName(format, compressionFor(format, compression))}`,
  );
  const writer = await openExportFile(hashedOutput(file), { format, compression, range });
  for (const row of rows) writer.add(row);
  await writer.end();
  await file.commit();
}

/** The fenced block of the doc whose first line is `first`, with the doc's root replaced by `root`. */
async function docBlock(first: string, root: string): Promise<string> {
  const doc = await fs.readFile(DOC, 'utf8');
  const block = [...doc.matchAll(/```\w+\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? '')
    .find((b) => b.startsWith(first));
  assert.ok(block, `docs/visitors-export.md has a block starting "${first}"`);
  return block.replaceAll('/exports', root);
}

/** (day, zone, paths, visitors) per day, as each query answers it. */
type DaySum = [string, string, number, number];

const expected = (included: (d: Day) => boolean): DaySum[] =>
  DAYS.flatMap((d, i): DaySum[] => {
    if (!included(d)) return [];
    const visitors = rowsOf(i + 2).reduce((total, row) => total + row.total, 0);
    return [[d.day, d.timeZone?.replace('/', '-') ?? 'UTC', i + 2, visitors]];
  });

/** Runs a doc block (argv[1]) whole, its own prints included (to stderr), leaving its names in `doc`. */
const RUN_DOC_BLOCK =
  'import contextlib, json, sys\ndoc = {}\nwith contextlib.redirect_stdout(sys.stderr):\n    exec(sys.argv[1], doc)';

describe('docs/visitors-export.md: the hive queries work on days in every format and zone, beside ranges', () => {
  let root = '';
  // Made here, not in the hook: a directory made in a hook is removed when the hook ends.
  const made = tempDir('hive-queries');
  before(async () => {
    root = await made;
    const destination = new LocalDestination(root);
    for (const [i, d] of DAYS.entries()) {
      const range = { dateFrom: d.day, dateTo: addDays(d.day, 1) };
      const folder = exportFolderKey('acme', range.dateFrom, range.dateTo, d.timeZone, 'hive');
      await write(destination, folder, d.format, range, rowsOf(i + 2), d.compression);
    }
    // Range exports (their own root), a partial day and staged pages: none of them is a day.
    for (const format of ['parquet', 'csv'] as const) {
      const range = { dateFrom: '2026-11-01', dateTo: format === 'csv' ? '2026-11-05' : '2026-11-08' };
      const folder = exportFolderKey('acme', range.dateFrom, range.dateTo, undefined, 'hive');
      await write(destination, folder, format, range, rowsOf(50));
    }
    const bridge = { dateFrom: '2026-11-20T00:00:00-08:00', dateTo: '2026-11-21T00:00:00+00:00' };
    await write(
      destination,
      exportFolderKey('acme', bridge.dateFrom, bridge.dateTo, undefined, 'hive'),
      'parquet',
      bridge,
      rowsOf(7),
    );
    const today = { dateFrom: '2026-11-27', dateTo: '2026-11-28' };
    await write(
      destination,
      exportFolderKey('acme', today.dateFrom, today.dateTo, undefined, 'hive', true),
      'parquet',
      today,
      rowsOf(9),
    );
    await fs.mkdir(path.join(root, '.staging', 'x'), { recursive: true });
    await fs.writeFile(
      path.join(root, '.staging', 'x', 'chunk-1.ndjson'),
      '{"path":"/x","human":1,"ai":1,"total":1}\n',
    );
    assert.ok((await fs.readdir(root)).includes('ranges'), 'the ranges have their own root');
  });

  test('DuckDB SQL: the Parquet days, UTC and Paris', async () => {
    const sql = await docBlock('-- DuckDB, a local directory', root);
    const rows = await readWithPython<[string, string, string, number, number][]>(
      'import duckdb, json, sys\nprint(json.dumps(duckdb.sql(sys.argv[1]).fetchall(), default=str))',
      sql.replace(/;\s*$/, ''),
    );
    assert.deepEqual(
      rows.map(([project, ...rest]) => (assert.equal(project, 'acme'), rest)),
      expected((d) => d.format === 'parquet'),
    );
  });

  test('DuckDB from Python: the days in every format', async () => {
    const rows = await readWithPython<[string, string, string, number, number][]>(
      `${RUN_DOC_BLOCK}\nprint(json.dumps(doc["summary"].fetchall(), default=str))`,
      await docBlock('# DuckDB from Python', root),
    );
    assert.deepEqual(
      rows.map(([, ...rest]) => rest),
      expected(() => true),
    );
  });

  test('pyarrow: the days in every format as one table', async () => {
    const rows = await readWithPython<[string, string, number, number][]>(
      `${RUN_DOC_BLOCK}\nimport collections\nsums = collections.defaultdict(lambda: [0, 0])\n` +
        'for r in doc["visitors"].to_pylist():\n    s = sums[(r["day"], r["zone"])]; s[0] += 1; s[1] += r["total"]\n' +
        'print(json.dumps(sorted([d, z, n, t] for (d, z), (n, t) in sums.items())))',
      await docBlock('# pyarrow: the same days', root),
    );
    assert.deepEqual(
      rows,
      expected(() => true),
    );
  });
});
