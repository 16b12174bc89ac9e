import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import {
  exportFileName,
  exportFileNames,
  exportFolderKey,
  fileSafe,
  layoutFor,
  parseStagedChunkName,
  stagedChunkName,
} from '../../src/exports/layout';
import { exportDirectory, stagingDirectory } from '../helpers/export-paths';

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

  test('hive: project=, then day= for one day; ranges under ranges/ with from=/to=, then zone= outside UTC', () => {
    const hive = (from: string, to: string, zone?: string) => exportFolderKey('acme', from, to, zone, 'hive');
    assert.equal(hive('2026-11-01', '2026-11-02'), 'project=acme/day=2026-11-01');
    assert.equal(hive('2026-11-01', '2026-11-02', 'UTC'), 'project=acme/day=2026-11-01');
    assert.equal(
      hive('2026-11-01', '2026-11-02', 'America/Argentina/Buenos_Aires'),
      'project=acme/day=2026-11-01/zone=America-Argentina-Buenos_Aires',
    );
    assert.equal(hive('2026-02-28', '2026-03-01'), 'project=acme/day=2026-02-28');
    assert.equal(hive('2026-11-01', '2026-11-03'), 'ranges/project=acme/from=2026-11-01/to=2026-11-03');
    assert.equal(
      hive('2026-11-01T00:00:00+02:00', '2026-11-02T00:00:00+02:00', 'Europe/Paris'),
      'ranges/project=acme/from=2026-11-01T00-00-00+02-00/to=2026-11-02T00-00-00+02-00/zone=Europe-Paris',
    );
    assert.equal(
      exportFolderKey('acme', '2026-11-01', '2026-11-02', 'Europe/Paris'),
      'acme/2026-11-01_2026-11-02_Europe-Paris',
    );
  });

  test('Parquet defaults to hive, text to the default layout; EXPORT_LAYOUT overrides both', () => {
    assert.equal(layoutFor('parquet'), 'hive');
    assert.equal(layoutFor('csv'), 'default');
    assert.equal(layoutFor('parquet', 'default'), 'default');
    assert.equal(layoutFor('ndjson', 'hive'), 'hive');
  });

  test('gzip names .csv.gz and .ndjson.gz; JSON and Parquet have one name each', () => {
    assert.equal(exportFileName('csv', 'gzip'), 'visitors.csv.gz');
    assert.deepEqual(exportFileNames().sort(), [
      'visitors.csv',
      'visitors.csv.gz',
      'visitors.json',
      'visitors.ndjson',
      'visitors.ndjson.gz',
      'visitors.parquet',
    ]);
  });

  test('staged chunks live under EXPORT_DIR and sort by offset as names', () => {
    const offsets = [0, 250, 1000, 12_500, 100_000];
    const names = offsets.map((offset) =>
      path.join(
        stagingDirectory('/exports', 'visitors-export/acme/k'),
        stagedChunkName({ runOffset: offset, attempt: 1, firstOffset: offset, pages: 1 }),
      ),
    );
    assert.ok(names[0]?.startsWith('/exports/.staging/'));
    assert.deepEqual([...names].sort(), names);
  });

  test('a chunk is named by its run, attempt, first offset and pages, and its name reads back', () => {
    const chunk = { runOffset: 4_000, attempt: 2, firstOffset: 8_000, pages: 16 };
    const name = stagedChunkName(chunk);
    assert.equal(name, 'chunk-000000004000-2-000000008000-16.ndjson');
    assert.deepEqual(parseStagedChunkName(name), chunk);
    const big = { runOffset: 12_345_678_901_250, attempt: 11, firstOffset: 12_345_678_901_500, pages: 3 };
    assert.deepEqual(parseStagedChunkName(stagedChunkName(big)), big);
  });

  test('names of other objects are not chunks', () => {
    for (const name of [
      'page-000000000250.ndjson',
      '.prepared',
      'chunk-000000000000-1-000000000000-0.ndjson',
      'chunk-000000000000-1-000000000000.ndjson',
      '.chunk-000000000000-1-000000000000-16.ndjson.0a1b2c3d4e5f.tmp',
    ]) {
      assert.equal(parseStagedChunkName(name), undefined, name);
    }
  });
});
