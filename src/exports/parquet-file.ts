import type { VisitorRow } from '../contract/visitors-export';
import { isDay } from '../contract/zone-days';
import type { ExportFileWriter, HashedOutput } from './destination';
import { singleDay } from './layout';

import type { ParquetWriter, Writer } from 'hyparquet-writer' with { 'resolution-mode': 'import' };

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];

/** Rows per row group: bounds the merge's memory (docs/benchmarks.md, "Parquet writers"). */
export const ROW_GROUP_ROWS = 10_000;

/** Snappy, in JavaScript: zstd needs Node 22.15+ or a native writer (docs/benchmarks.md). */
const CODEC = 'SNAPPY';

const DAY_MS = 86_400_000;

/** The constant columns: `day` for a one-day export, else `date_from` and `date_to` (dates, or timestamps). */
function rangeColumns(dateFrom: string, dateTo: string): { element: SchemaElement; value: number }[] {
  const day = singleDay(dateFrom, dateTo);
  const date = (name: string, text: string) => ({
    element: { name, type: 'INT32', converted_type: 'DATE', repetition_type: 'REQUIRED' } as const,
    value: Date.parse(`${text}T00:00:00Z`) / DAY_MS,
  });
  if (day !== undefined) return [date('day', day)];
  if (isDay(dateFrom) && isDay(dateTo)) return [date('date_from', dateFrom), date('date_to', dateTo)];
  const instant = (name: string, text: string) => ({
    element: {
      name,
      type: 'INT64',
      converted_type: 'TIMESTAMP_MILLIS',
      repetition_type: 'REQUIRED',
    } as const,
    value: Date.parse(text),
  });
  return [instant('date_from', dateFrom), instant('date_to', dateTo)];
}

/**
 * `visitors.parquet`: `path` (string), `human`, `ai`, `total` (int64) and the range's columns, written a row group
 * at a time as rows arrive; only the footer waits for the end.
 */
export async function openParquetFile(
  output: HashedOutput,
  range: { dateFrom: string; dateTo: string },
  rowGroupRows = ROW_GROUP_ROWS,
): Promise<ExportFileWriter> {
  // An ES module: loaded when a Parquet export first merges, never by workers that write text only.
  const { ByteWriter, ParquetWriter } = await import('hyparquet-writer');
  const constants = rangeColumns(range.dateFrom, range.dateTo);
  const int64 = (name: string): SchemaElement => ({ name, type: 'INT64', repetition_type: 'REQUIRED' });
  const schema: SchemaElement[] = [
    { name: 'root', num_children: 4 + constants.length },
    { name: 'path', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    int64('human'),
    int64('ai'),
    int64('total'),
    ...constants.map((column) => column.element),
  ];
  const bytes = new ByteWriter();
  // Each row group's bytes go out as soon as it is encoded; the buffer is reused for the next.
  const flush = async (): Promise<void> => {
    const chunk = new Uint8Array(bytes.buffer.slice(0, bytes.index));
    bytes.index = 0;
    await output.write(chunk);
  };
  const writer: Writer = Object.assign(bytes, { flush, finish: flush });
  const parquet = new ParquetWriter({ writer, schema, codec: CODEC, createdBy: 'docs-agent-worker' });
  let group: VisitorRow[] = [];
  const full: VisitorRow[][] = [];

  const write = async (rows: VisitorRow[]): Promise<void> => {
    const int64 = (value: (row: VisitorRow) => number) =>
      BigInt64Array.from(rows, (row) => BigInt(value(row)));
    const columnData = [
      { name: 'path', data: rows.map((row) => row.path) },
      { name: 'human', data: int64((row) => row.human) },
      { name: 'ai', data: int64((row) => row.ai) },
      { name: 'total', data: int64((row) => row.total) },
      ...constants.map(({ element, value }) => ({
        name: element.name,
        data:
          element.type === 'INT32'
            ? new Int32Array(rows.length).fill(value)
            : new BigInt64Array(rows.length).fill(BigInt(value)),
      })),
    ];
    await parquet.write({ columnData, rowGroupSize: rows.length });
  };

  const drain = async (): Promise<void> => {
    for (let next = full.shift(); next !== undefined; next = full.shift()) await write(next);
  };
  return {
    add(row: VisitorRow): void {
      group.push(row);
      if (group.length === rowGroupRows) {
        full.push(group);
        group = [];
      }
    },
    drain,
    async end(): Promise<void> {
      await drain();
      if (group.length > 0) await write(group);
      await parquet.finish();
    },
  };
}
