import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import {
  exportDirectory,
  exportFileName,
  fileSafe,
  stagedPagePath,
  stagingDirectory,
} from '../../src/exports/layout';

describe('export file layout', () => {
  test('fileSafe keeps dates, ids and offsets apart and drops characters file systems refuse', () => {
    assert.equal(fileSafe('acme-docs_2.1'), 'acme-docs_2.1');
    assert.equal(fileSafe('2026-11-01T00:00:00+02:00'), '2026-11-01T00-00-00+02-00');
    assert.notEqual(fileSafe('2026-11-01T00:00:00+02:00'), fileSafe('2026-11-01T00:00:00-02:00'));
    assert.equal(fileSafe('visitors-export/acme/2026'), 'visitors-export-acme-2026');
    assert.ok(!fileSafe('../../etc').includes('/'));
  });

  test('one directory per project and date range, the file named by its format', () => {
    assert.equal(
      path.join(exportDirectory('/exports', 'acme', '2026-11-01', '2026-11-02'), exportFileName('csv')),
      '/exports/acme/2026-11-01_2026-11-02/visitors.csv',
    );
  });

  test('staged pages live under EXPORT_DIR and sort by offset as names', () => {
    const offsets = [0, 250, 1000, 12_500, 100_000];
    const names = offsets.map((offset) => stagedPagePath('/exports', 'visitors-export/acme/k', offset));
    for (const name of names)
      assert.equal(path.dirname(name), stagingDirectory('/exports', 'visitors-export/acme/k'));
    assert.ok(names[0]?.startsWith('/exports/.staging/'));
    assert.deepEqual([...names].sort(), names);
  });
});
