import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { openAtomicFile, writeFileAtomic } from '../../src/exports/local-destination';
import { tempDir } from '../helpers/temp-dir';

describe('atomic file', () => {
  test('readers see the old content until commit, then the whole new content; no temporary file stays', async () => {
    const dir = await tempDir('atomic-file');
    const target = path.join(dir, 'visitors.csv');
    await fs.writeFile(target, 'old\n');

    const file = await openAtomicFile(target);
    await file.write('new ');
    await file.write(Buffer.from('content\n'));
    assert.equal(await fs.readFile(target, 'utf8'), 'old\n');
    await file.commit();
    assert.equal(await fs.readFile(target, 'utf8'), 'new content\n');
    assert.deepEqual(await fs.readdir(dir), ['visitors.csv']);
  });

  test('abort keeps the old content and removes the temporary file', async () => {
    const dir = await tempDir('atomic-file');
    const target = path.join(dir, 'visitors.json');
    await fs.writeFile(target, 'old');
    const file = await openAtomicFile(target);
    await file.write('half a fi');
    await file.abort();
    assert.equal(await fs.readFile(target, 'utf8'), 'old');
    assert.deepEqual(await fs.readdir(dir), ['visitors.json']);
  });

  test('content larger than the write buffer arrives whole and in order', async () => {
    const dir = await tempDir('atomic-file');
    const target = path.join(dir, 'big.ndjson');
    const lines = Array.from({ length: 60_000 }, (_, i) => `{"path":"/docs/page-${i}","total":${i}}\n`);
    const file = await openAtomicFile(target);
    for (const line of lines) await file.write(line);
    await file.commit();
    const written = await fs.readFile(target, 'utf8');
    assert.ok(written.length > 2 * 1024 * 1024);
    assert.equal(written, lines.join(''));
  });

  test('writeFileAtomic creates the directory', async () => {
    const dir = await tempDir('atomic-file');
    const nested = path.join(dir, 'a', 'b', 'totals.json');
    await writeFileAtomic(nested, '{}');
    assert.equal(await fs.readFile(nested, 'utf8'), '{}');
  });
});
