import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { VisitorRow } from '../../src/contract/visitors-export';
import { stagedChunkName } from '../../src/exports/layout';
import { ExportStaging } from '../../src/exports/destination';
import { LocalDestination } from '../../src/exports/local-destination';
import { stagingRoot } from '../helpers/export-paths';
import { tempDir } from '../helpers/temp-dir';

const ROWS: VisitorRow[] = [
  { path: '/a', human: 1, ai: 0, total: 1 },
  { path: '/b', human: 2, ai: 3, total: 5 },
];

describe('ExportStaging', () => {
  test('a lone page is a one-page chunk; rewriting it replaces it whole', async () => {
    const staging = new ExportStaging(
      new LocalDestination(await tempDir('staging')),
      'visitors-export/acme/k',
    );
    await staging.prepare();
    const writer = { runOffset: 0, attempt: 1 };
    await staging.writeChunk(writer, [{ offset: 0, rows: ROWS }]);
    await staging.writeChunk(writer, [{ offset: 0, rows: ROWS.slice(1) }]);
    const name = stagedChunkName({ ...writer, firstOffset: 0, pages: 1 });
    assert.deepEqual(await fs.readdir(staging.directory), ['.prepared', name]);
    assert.deepEqual(await staging.readObject(name), [{ offset: 0, rows: ROWS.slice(1) }]);
  });

  test('a chunk holds consecutive pages in one object, read back page for page', async () => {
    const staging = new ExportStaging(new LocalDestination(await tempDir('staging')), 'k');
    await staging.prepare();
    const pages = [
      { offset: 250, rows: ROWS },
      { offset: 500, rows: [] },
      { offset: 750, rows: ROWS.slice(1) },
    ];
    await staging.writeChunk({ runOffset: 250, attempt: 1 }, pages);
    await staging.writeChunk({ runOffset: 0, attempt: 1 }, [{ offset: 0, rows: ROWS }]);
    const chunk = stagedChunkName({ runOffset: 250, attempt: 1, firstOffset: 250, pages: 3 });
    const lone = stagedChunkName({ runOffset: 0, attempt: 1, firstOffset: 0, pages: 1 });
    assert.deepEqual((await fs.readdir(staging.directory)).sort(), ['.prepared', lone, chunk]);
    assert.deepEqual(await staging.readObject(chunk), pages);

    assert.deepEqual(await staging.stagedPages([0, 250, 500, 750]), {
      found: true,
      sources: [
        { offset: 0, object: lone, position: 0 },
        { offset: 250, object: chunk, position: 0 },
        { offset: 500, object: chunk, position: 1 },
        { offset: 750, object: chunk, position: 2 },
      ],
    });
    assert.deepEqual(await staging.stagedPages([0, 250, 500, 750, 1000]), { found: false, missing: [1000] });
  });

  test('a chunk written after the export was cleaned up fails and leaves nothing behind', async () => {
    const staging = new ExportStaging(new LocalDestination(await tempDir('staging')), 'k');
    await staging.prepare();
    await staging.remove();
    await assert.rejects(staging.writeChunk({ runOffset: 0, attempt: 1 }, [{ offset: 0, rows: ROWS }]), {
      type: 'ExportStagingMissing',
    });
    await assert.rejects(fs.access(staging.directory), { code: 'ENOENT' });
  });

  test('pruneStaleStaging removes the staging areas untouched for longer than the limit', async () => {
    const exportDir = await tempDir('staging');
    const old = new ExportStaging(new LocalDestination(exportDir), 'old');
    const fresh = new ExportStaging(new LocalDestination(exportDir), 'fresh');
    await Promise.all([old.prepare(), fresh.prepare()]);
    const hourAgo = new Date(Date.now() - 3_600_000);
    await fs.utimes(path.join(old.directory, '.prepared'), hourAgo, hourAgo);

    // Staged by a worker of 0.2 (no marker), pages written a minute ago: an export in flight, kept.
    await fs.mkdir(path.join(stagingRoot(exportDir), 'unmarked'));
    await fs.writeFile(path.join(stagingRoot(exportDir), 'unmarked', 'page-0.ndjson'), '{}\n');

    assert.deepEqual(await new LocalDestination(exportDir).pruneStaleStaging(30 * 60_000), ['old']);
    assert.deepEqual((await fs.readdir(stagingRoot(exportDir))).sort(), ['fresh', 'unmarked']);
    assert.deepEqual(
      await new LocalDestination(path.join(exportDir, 'nothing-here')).pruneStaleStaging(0),
      [],
    );
  });
});
