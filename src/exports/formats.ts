import type { ExportFormat } from '../contract/visitors-export';
import type { VisitorRow } from '../contract/visitors-export';

export const CSV_HEADER = 'path,human,ai,total\n';

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Serializes rows incrementally: `start`, then `row` for each row, then `end`. */
export interface RowEncoder {
  start(): string;
  row(row: VisitorRow, index: number): string;
  end(): string;
}

export function encoderFor(format: ExportFormat): RowEncoder {
  switch (format) {
    case 'csv':
      return {
        start: () => CSV_HEADER,
        row: (r) => `${csvField(r.path)},${r.human},${r.ai},${r.total}\n`,
        end: () => '',
      };
    case 'ndjson':
      return { start: () => '', row: (r) => `${JSON.stringify(r)}\n`, end: () => '' };
    case 'json':
      return {
        start: () => '[',
        row: (r, i) => `${i === 0 ? '\n' : ',\n'}${JSON.stringify(r)}`,
        end: () => '\n]\n',
      };
  }
}
