import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { VisitorRow } from '../../src/contract/visitors-export';
import { stagingRoot } from '../../src/exports/layout';
import { ExportStaging, StagingMissingError, pruneStaleStaging } from '../../src/exports/staging';
import { tempDir } from '../helpers/temp-dir';

const ROWS: VisitorRow[] = [
  { path: '/a', human: 1, ai: 0, total: 1 },
  { path: '/b', human: 2, ai: 3, total: 5 },
];

async function readAll(staging: ExportStaging, offset: number): Promise<VisitorRow[]> {
  const rows: VisitorRow[] = [];
  rows.push(...(await staging.readPage(offset)));
  return rows;
}

describe('ExportStaging', () => {
  test('a page written is read back row for row; rewriting it replaces it whole', async () => {
    const staging = new ExportStaging(await tempDir('staging'), 'visitors-export/acme/k');
    await staging.prepare();
    await staging.writePage(0, ROWS);
    await staging.writePage(250, []);
    assert.deepEqual(await readAll(staging, 0), ROWS);
    assert.deepEqual(await readAll(staging, 250), []);

    await staging.writePage(0, ROWS.slice(1));
    assert.deepEqual(await readAll(staging, 0), ROWS.slice(1));
    assert.deepEqual(await staging.missingPages([0, 250, 500]), [500]);
  });

  test('a page written after the export was cleaned up fails and leaves nothing behind', async () => {
    const exportDir = await tempDir('staging');
    const staging = new ExportStaging(exportDir, 'k');
    await staging.prepare();
    await staging.remove();
    await assert.rejects(staging.writePage(0, ROWS), StagingMissingError);
    await assert.rejects(fs.access(staging.directory), { code: 'ENOENT' });
  });

  test('pruneStaleStaging removes the staging areas untouched for longer than the limit', async () => {
    const exportDir = await tempDir('staging');
    const old = new ExportStaging(exportDir, 'old');
    const fresh = new ExportStaging(exportDir, 'fresh');
    await Promise.all([old.prepare(), fresh.prepare()]);
    const hourAgo = new Date(Date.now() - 3_600_000);
    await fs.utimes(old.directory, hourAgo, hourAgo);

    assert.deepEqual(await pruneStaleStaging(exportDir, 30 * 60_000), ['old']);
    assert.deepEqual(await fs.readdir(stagingRoot(exportDir)), ['fresh']);
    assert.deepEqual(await pruneStaleStaging(path.join(exportDir, 'nothing-here'), 0), []);
  });
});
