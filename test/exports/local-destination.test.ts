import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { describe, test } from 'node:test';
import { LocalDestination, temporaryPathFor } from '../../src/exports/local-destination';
import { mountSmallDisk, smallDiskSkipped } from '../helpers/small-disk';
import { tempDir } from '../helpers/temp-dir';

/** The final objects of two projects' exports, each holding its own key. */
const FINAL = [
  'acme/2026-11-01_2026-11-02/manifest.json',
  'acme/2026-11-01_2026-11-02/visitors.csv',
  'acme/2026-11-02_2026-11-03_partial/manifest.json',
  'acme-2/2026-11-01_2026-11-02/manifest.json',
  'project=acme/day=2026-11-01/manifest.json',
];

/** The final keys S3 would list for a prefix: those that start with it, in byte order. */
const startingWith = (prefix: string): string[] => FINAL.filter((key) => key.startsWith(prefix)).sort();

/** FINAL, beside a staged page and a write cut short (its temporary file left). */
async function filled(): Promise<{ dir: string; destination: LocalDestination }> {
  const dir = await tempDir('local-destination');
  const destination = new LocalDestination(dir);
  for (const key of FINAL) await destination.writeFinal(key, key);
  await destination.writeFinal('.staging/acme-k/chunk.ndjson', '{}\n');
  const cutShort = destination.location('acme/2026-11-03_2026-11-04/manifest.json');
  await fs.mkdir(path.dirname(cutShort), { recursive: true });
  await fs.writeFile(temporaryPathFor(cutShort), '{');
  return { dir, destination };
}

describe('LocalDestination: finding final objects', () => {
  test('listFinal lists the final files under a folder, sorted, staged pages only under staging, never a file being written', async () => {
    const { dir, destination } = await filled();
    assert.equal((await fs.readdir(path.join(dir, 'acme/2026-11-03_2026-11-04'))).length, 1, 'a .tmp file');
    assert.equal(startingWith('acme/').length, 3);
    assert.deepEqual(await destination.listFinal('acme/'), startingWith('acme/'));
    assert.deepEqual(await destination.listFinal('project=acme/'), [
      'project=acme/day=2026-11-01/manifest.json',
    ]);
    assert.deepEqual(await destination.listFinal(''), startingWith(''));
    assert.deepEqual(await destination.listFinal('.staging/'), ['.staging/acme-k/chunk.ndjson'], 'asked for');
  });

  test('a prefix is matched as S3 matches it: any key that starts with it', async () => {
    const { destination } = await filled();
    for (const prefix of ['acme', 'acme/2026-11-02', 'acme/2026-11-01_2026-11-02/manifest.json']) {
      assert.deepEqual(await destination.listFinal(prefix), startingWith(prefix), prefix);
    }
    assert.equal(startingWith('acme').length, 4, 'acme-2 too');
  });

  test('listFinal of a folder that is not there, or of a directory that does not exist yet, is empty', async () => {
    const { destination } = await filled();
    assert.deepEqual(await destination.listFinal('nobody/'), []);
    assert.deepEqual(await destination.listFinal('acme/2026-11-01_2026-11-02/visitors.csv/'), []);
    const fresh = new LocalDestination(path.join(await tempDir('local-destination'), 'not-yet'));
    assert.deepEqual(await fresh.listFinal(''), []);
  });

  test('readFinal reads a final object whole, and answers undefined where there is none', async () => {
    const { destination } = await filled();
    const key = 'acme/2026-11-01_2026-11-02/manifest.json';
    assert.equal(await destination.readFinal(key), key);
    assert.equal(await destination.readFinal('acme/2026-11-09_2026-11-10/manifest.json'), undefined);
    assert.equal(await destination.readFinal('acme/2026-11-01_2026-11-02/visitors.csv/x'), undefined);
    // A refusal another attempt cannot fix fails at once, as a write's does (the merge and the nightly read).
    await assert.rejects(destination.readFinal('acme'), (error: unknown) => {
      assert.ok(error instanceof ApplicationFailure && error.type === 'ExportDestinationUnavailable');
      assert.match(error.message, /^export directory \S+ cannot be read \(EISDIR: read acme\)$/);
      assert.equal(error.nonRetryable, true);
      return true;
    });
  });
});

describe('LocalDestination: faults another attempt cannot fix', { skip: smallDiskSkipped() }, () => {
  test('the probe writes a file: a full disk and a read-only one fail it, naming the code; it leaves nothing', async () => {
    const disk = await mountSmallDisk(16 * 1024);
    try {
      const destination = new LocalDestination(disk.dir);
      await destination.probe();
      assert.deepEqual(await fs.readdir(disk.dir), [], 'the probe file is removed');
      await disk.fill();
      await assert.rejects(destination.probe(), (error: unknown) => {
        assert.ok(error instanceof ApplicationFailure && error.type === 'ExportDestinationUnavailable');
        assert.match(
          error.message,
          /^export directory \S+ cannot be written \(ENOSPC: write \.probe-[0-9a-f]{12}\)$/,
        );
        return true;
      });
      await disk.empty();
      await disk.readOnly();
      await assert.rejects(destination.probe(), /cannot be written \(EROFS: open \.probe-/);
    } finally {
      await disk.unmount();
    }
  });

  test('a write that fills the disk fails with ExportDestinationUnavailable, and leaves no part behind', async () => {
    const disk = await mountSmallDisk(16 * 1024);
    try {
      const destination = new LocalDestination(disk.dir);
      const file = await destination.openFinal('acme/visitors.csv');
      const write = async () => {
        for (;;) await file.write('x'.repeat(4096));
      };
      await assert.rejects(write(), /cannot be written \(ENOSPC: write acme\/visitors\.csv\)/);
      await file.abort();
      assert.deepEqual(await fs.readdir(path.join(disk.dir, 'acme')), []);
    } finally {
      await disk.unmount();
    }
  });
});
