import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { VisitorRow } from '../../src/contract/visitors-export';
import { LocalDestination } from '../../src/exports/local-destination';
import { hashedOutput } from '../../src/exports/destination';
import { CSV_HEADER, openExportFile, type ExportFileOptions } from '../../src/exports/formats';
import { ROW_GROUP_ROWS } from '../../src/exports/parquet-file';
import { duckdbRow, readWithPython } from '../helpers/export-readers';
import { tempDir } from '../helpers/temp-dir';

const rowAt = (n: number): VisitorRow => ({
  path: n === 3 ? '/docs/a,"quoted"' : `/docs/section-${n % 7}/page-${n}`,
  human: n % 13,
  ai: n % 5,
  total: (n % 13) + (n % 5),
});

/** Writes `count` rows through the export file writer, a page of 250 at a time as the merge does. */
async function written(options: ExportFileOptions, count: number, name: string) {
  const dir = await tempDir('export-file');
  const destination = new LocalDestination(dir);
  const file = await destination.openFinal(name);
  const output = hashedOutput(file);
  const writer = await openExportFile(output, options);
  for (let n = 0; n < count; n += 1) {
    writer.add(rowAt(n));
    if (n % 250 === 249) await writer.drain();
  }
  await writer.end();
  await file.commit();
  const file_ = path.join(dir, name);
  const content = await fs.readFile(file_);
  assert.equal(output.bytes(), content.length);
  assert.equal(
    output.sha256(),
    createHash('sha256').update(content).digest('hex'),
    'sha256 of the bytes written',
  );
  return { path: file_, content };
}

const PYARROW_LAYOUT = `
import json, sys
import pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
groups = []
for i in range(f.metadata.num_row_groups):
    g = f.metadata.row_group(i)
    stats = {}
    for c in range(g.num_columns):
        col = g.column(c)
        s = col.statistics
        stats[col.path_in_schema] = [s.min, s.max] if s is not None and s.has_min_max else None
    groups.append({"rows": g.num_rows, "stats": stats, "codec": g.column(0).compression})
schema = {f.schema_arrow.field(i).name: str(f.schema_arrow.field(i).type) for i in range(len(f.schema_arrow))}
print(json.dumps({"schema": schema, "groups": groups, "rows": f.metadata.num_rows}, default=str))
`;

interface ParquetLayout {
  schema: Record<string, string>;
  groups: { rows: number; stats: Record<string, [unknown, unknown] | null>; codec: string }[];
  rows: number;
}

describe('export files', () => {
  test('parquet: pyarrow reads the schema, row groups of ROW_GROUP_ROWS and their statistics', async () => {
    const rows = 6 * ROW_GROUP_ROWS + 123;
    const file = await written(
      { format: 'parquet', range: { dateFrom: '2026-11-01', dateTo: '2026-11-02' } },
      rows,
      'p/visitors.parquet',
    );
    const layout = await readWithPython<ParquetLayout>(PYARROW_LAYOUT, file.path);
    assert.deepEqual(layout.schema, {
      path: 'string',
      human: 'int64',
      ai: 'int64',
      total: 'int64',
      day: 'date32[day]',
    });
    assert.equal(layout.rows, rows);
    assert.deepEqual(
      layout.groups.map((g) => g.rows),
      [...Array.from({ length: 6 }, () => ROW_GROUP_ROWS), 123],
    );
    assert.ok(layout.groups.every((g) => g.codec === 'SNAPPY'));
    const [first] = layout.groups;
    assert.deepEqual(first?.stats.total, [0, 16]);
    assert.deepEqual(first?.stats.day, ['2026-11-01', '2026-11-01']);
    const [count, sum, paths, quoted] = await duckdbRow<[number, number, number, string]>(
      `SELECT count(*), sum(total), count(DISTINCT path), max(path) FILTER (WHERE path LIKE '%quoted%')
       FROM read_parquet('${file.path}')`,
    );
    const expected = Array.from({ length: rows }, (_, n) => rowAt(n));
    assert.deepEqual(
      [count, sum, paths, quoted],
      [rows, expected.reduce((s, r) => s + r.total, 0), rows, '/docs/a,"quoted"'],
    );
  });

  test('parquet: a range has date_from and date_to; ISO date-times are timestamps', async () => {
    const days = await written(
      { format: 'parquet', range: { dateFrom: '2026-11-01', dateTo: '2026-12-01' } },
      10,
      'r/visitors.parquet',
    );
    const instants = await written(
      { format: 'parquet', range: { dateFrom: '2026-11-01T06:00:00Z', dateTo: '2026-11-01T18:00:00+02:00' } },
      10,
      'i/visitors.parquet',
    );
    const [from, to, n] = await duckdbRow(
      `SELECT DISTINCT date_from, date_to, count(*) OVER () FROM read_parquet('${days.path}')`,
    );
    assert.deepEqual([from, to, n], ['2026-11-01', '2026-12-01', 10]);
    const [fromTs, toTs] = await duckdbRow(
      `SELECT DISTINCT date_from::VARCHAR, date_to::VARCHAR FROM read_parquet('${instants.path}')`,
    );
    assert.deepEqual([fromTs, toTs], ['2026-11-01 06:00:00', '2026-11-01 16:00:00']);
  });

  test('gzip CSV: one gzip stream DuckDB reads with read_csv, the same text as plain CSV', async () => {
    const rows = 20_000;
    const range = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
    const gz = await written({ format: 'csv', compression: 'gzip', range }, rows, 'c/visitors.csv.gz');
    const plain = await written({ format: 'csv', range }, rows, 'c/visitors.csv');
    assert.equal(gunzipSync(gz.content).toString('utf8'), plain.content.toString('utf8'));
    assert.ok(plain.content.toString('utf8').startsWith(CSV_HEADER));
    assert.ok(gz.content.length < plain.content.length / 3, 'compressed');
    const [count, sum, quoted] = await duckdbRow(
      `SELECT count(*), sum(total), max(path) FILTER (WHERE path LIKE '%quoted%') FROM read_csv('${gz.path}')`,
    );
    const expected = Array.from({ length: rows }, (_, n) => rowAt(n)).reduce((s, r) => s + r.total, 0);
    assert.deepEqual([count, sum, quoted], [rows, expected, '/docs/a,"quoted"']);
  });

  test('gzip NDJSON: DuckDB reads it with read_json', async () => {
    const range = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
    const gz = await written({ format: 'ndjson', compression: 'gzip', range }, 1_000, 'n/visitors.ndjson.gz');
    const [count, paths] = await duckdbRow(
      `SELECT count(*), count(DISTINCT path) FROM read_json('${gz.path}', format = 'newline_delimited')`,
    );
    assert.deepEqual([count, paths], [1_000, 1_000]);
  });
});
