import { once } from 'node:events';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { InvariantError } from '../contract/errors';
import type { ExportCompression, ExportFormat, VisitorRow } from '../contract/visitors-export';
import type { ExportFileWriter, HashedOutput } from './destination';
import { openParquetFile } from './parquet-file';

export const CSV_HEADER = 'path,human,ai,total\n';

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export type TextFormat = Exclude<ExportFormat, 'parquet'>;

/** How each text format writes its start, a row (its index: JSON's commas) and its end. */
export const ENCODERS: Record<
  TextFormat,
  { start: string; row: (row: VisitorRow, index: number) => string; end: string }
> = {
  csv: { start: CSV_HEADER, row: (r) => `${csvField(r.path)},${r.human},${r.ai},${r.total}\n`, end: '' },
  ndjson: { start: '', row: (r) => `${JSON.stringify(r)}\n`, end: '' },
  json: { start: '[', row: (r, i) => `${i === 0 ? '\n' : ',\n'}${JSON.stringify(r)}`, end: '\n]\n' },
};

export interface ExportFileOptions {
  format: ExportFormat;
  /** gzip applies to the text formats (layout.ts's compressionFor says which); default none. */
  compression?: ExportCompression | undefined;
  /** The export's dates: Parquet writes them as columns (`day`, or `date_from` and `date_to`); required there. */
  range?: { dateFrom: string; dateTo: string } | undefined;
}

export async function openExportFile(
  output: HashedOutput,
  options: ExportFileOptions,
): Promise<ExportFileWriter> {
  if (options.format === 'parquet') {
    if (options.range === undefined) throw new InvariantError('a Parquet export file needs its dates');
    return openParquetFile(output, options.range);
  }
  const target = options.compression === 'gzip' ? gzipped(output) : { ...output, end: async () => {} };
  return textFile(ENCODERS[options.format], target);
}

/**
 * Encoded rows are gathered to about this many UTF-16 code units before they are written: one encode, one hash
 * update and one await per chunk, not per page; memory stays a few hundred KB.
 */
const WRITE_CHUNK_UNITS = 256 * 1024;

interface ByteSink {
  write(chunk: Uint8Array): Promise<void>;
  end(): Promise<void>;
}

function textFile(encoder: (typeof ENCODERS)[TextFormat], sink: ByteSink): ExportFileWriter {
  let pending: string[] = [encoder.start];
  let pendingUnits = encoder.start.length;
  let rows = 0;
  const flush = async (): Promise<void> => {
    if (pendingUnits === 0) return;
    const chunk = Buffer.from(pending.join(''), 'utf8');
    pending = [];
    pendingUnits = 0;
    await sink.write(chunk);
  };
  const push = (text: string): void => {
    pending.push(text);
    pendingUnits += text.length;
  };
  return {
    add: (row) => push(encoder.row(row, rows++)),
    drain: async () => (pendingUnits >= WRITE_CHUNK_UNITS ? flush() : undefined),
    async end() {
      push(encoder.end);
      await flush();
      await sink.end();
    },
  };
}

/** One gzip stream (a single member, as every gzip reader expects) in front of `output`. */
function gzipped(output: HashedOutput): ByteSink {
  const gzip = createGzip();
  const compressed = new Writable({
    write: (chunk: Buffer, _encoding, done) => void output.write(chunk).then(() => done(), done),
  });
  const finished = pipeline(gzip, compressed);
  // Observed by write and end; a failure before either must not be an unhandled rejection.
  finished.catch(() => undefined);
  return {
    async write(chunk) {
      if (!gzip.write(chunk)) await Promise.race([once(gzip, 'drain'), finished]);
    },
    async end() {
      gzip.end();
      await finished;
    },
  };
}
