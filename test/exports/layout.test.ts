import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import {
  exportDirectory,
  exportFileName,
  fileSafe,
  parseStagedChunkName,
  parseStagedPageName,
  stagedChunkName,
  stagedPageName,
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

  test('a chunk is named by its block, attempt, first offset and pages, and its name reads back', () => {
    const chunk = { blockOffset: 4_000, attempt: 2, firstOffset: 8_000, pages: 16 };
    const name = stagedChunkName(chunk);
    assert.equal(name, 'chunk-000000004000-2-000000008000-16.ndjson');
    assert.deepEqual(parseStagedChunkName(name), chunk);
    const big = { blockOffset: 12_345_678_901_250, attempt: 11, firstOffset: 12_345_678_901_500, pages: 3 };
    assert.deepEqual(parseStagedChunkName(stagedChunkName(big)), big);
  });

  test('names of other objects are neither chunks nor pages', () => {
    for (const name of [
      stagedPageName(250),
      '.prepared',
      'chunk-000000000000-1-000000000000-0.ndjson',
      'chunk-000000000000-1-000000000000.ndjson',
      '.chunk-000000000000-1-000000000000-16.ndjson.0a1b2c3d4e5f.tmp',
    ]) {
      assert.equal(parseStagedChunkName(name), undefined, name);
    }
    assert.equal(parseStagedPageName(stagedPageName(250)), 250);
    assert.equal(
      parseStagedPageName(stagedChunkName({ blockOffset: 0, attempt: 1, firstOffset: 0, pages: 1 })),
      undefined,
    );
    assert.equal(parseStagedPageName('.page-000000000250.ndjson.0a1b2c3d4e5f.tmp'), undefined);
  });
});
