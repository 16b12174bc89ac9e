import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VisitorRow } from '../../src/contract/visitors-export';
import { CSV_HEADER, ENCODERS, type TextFormat } from '../../src/exports/formats';

const ROWS: VisitorRow[] = [
  { path: '/docs/intro', human: 3, ai: 1, total: 4 },
  { path: '/docs/a,b', human: 0, ai: 2, total: 2 },
  { path: '/docs/"quoted"\nline', human: 5, ai: 0, total: 5 },
];

function encode(format: TextFormat, rows: readonly VisitorRow[]): string {
  const encoder = ENCODERS[format];
  return encoder.start + rows.map((row, index) => encoder.row(row, index)).join('') + encoder.end;
}

describe('export encoders', () => {
  test('csv: a header, one line per row, fields with a comma, quote or newline quoted', () => {
    assert.equal(
      encode('csv', ROWS),
      CSV_HEADER + '/docs/intro,3,1,4\n' + '"/docs/a,b",0,2,2\n' + '"/docs/""quoted""\nline",5,0,5\n',
    );
    assert.equal(encode('csv', []), 'path,human,ai,total\n');
  });

  test('ndjson: one JSON object per line', () => {
    const lines = encode('ndjson', ROWS).split('\n');
    assert.equal(lines.pop(), '', 'ends with a newline');
    assert.deepEqual(
      lines.map((line) => JSON.parse(line) as unknown),
      ROWS,
    );
    assert.equal(encode('ndjson', []), '');
  });

  test('json: one array, valid with no rows, one row or many', () => {
    for (const rows of [[], ROWS.slice(0, 1), ROWS]) {
      const text = encode('json', rows);
      assert.deepEqual(JSON.parse(text), rows);
      assert.ok(text.endsWith('\n'));
    }
  });
});
