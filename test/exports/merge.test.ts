import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { VisitorRow } from '../../src/contract/visitors-export';
import { LocalDestination } from '../../src/exports/local-destination';
import { mergeStagedPages } from '../../src/exports/merge';
import { ExportStaging } from '../../src/exports/destination';
import { tempDir } from '../helpers/temp-dir';

const row = (p: string, total: number): VisitorRow => ({ path: p, human: total, ai: 0, total });

/** Stages the pages (offset → rows) of one export in a fresh directory, each a one-page chunk. */
async function staged(pages: Record<number, VisitorRow[]>): Promise<{ staging: ExportStaging; dir: string }> {
  const dir = await tempDir('merge');
  const staging = new ExportStaging(new LocalDestination(dir), 'visitors-export/acme/k');
  await staging.prepare();
  for (const [offset, rows] of Object.entries(pages)) {
    await staging.writeChunk({ runOffset: Number(offset), attempt: 1 }, [{ offset: Number(offset), rows }]);
  }
  return { staging, dir };
}

describe('mergeStagedPages', () => {
  test('writes the pages in offset order, each path once (its first occurrence), with a matching hash', async () => {
    const { staging, dir } = await staged({
      0: [row('/a', 1), row('/b', 2)],
      2: [row('/b', 9), row('/d', 4), row('/d', 8)],
      4: [row('/e', 5)],
    });
    const target = 'out/visitors.ndjson';
    const pagesSeen: number[] = [];
    const outcome = await mergeStagedPages({
      staging,
      offsets: [0, 2, 4],
      format: 'ndjson',
      target,
      onPage: (index) => pagesSeen.push(index),
    });

    const written = await fs.readFile(path.join(dir, target), 'utf8');
    const rows = written
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as VisitorRow);
    assert.deepEqual(rows, [row('/a', 1), row('/b', 2), row('/d', 4), row('/e', 5)]);
    assert.deepEqual(outcome, {
      rows: 4,
      stagedRows: 6,
      bytes: Buffer.byteLength(written),
      sha256: createHash('sha256').update(written).digest('hex'),
      duplicateCount: 2,
      duplicatePaths: ['/b', '/d'],
    });
    assert.deepEqual(pagesSeen, [0, 1, 2]);
  });

  test('only the offsets asked for are merged, in the order given', async () => {
    const { staging, dir } = await staged({
      0: [row('/a', 1)],
      1: [row('/b', 2)],
      2: [row('/past-the-end', 3)],
    });
    const target = 'visitors.csv';
    const outcome = await mergeStagedPages({ staging, offsets: [0, 1], format: 'csv', target });
    assert.equal(
      await fs.readFile(path.join(dir, target), 'utf8'),
      'path,human,ai,total\n/a,1,0,1\n/b,2,0,2\n',
    );
    assert.equal(outcome.rows, 2);
  });

  test('an export with no rows is a valid empty file', async () => {
    const { staging, dir } = await staged({ 0: [] });
    const target = 'visitors.json';
    const outcome = await mergeStagedPages({ staging, offsets: [0], format: 'json', target });
    assert.deepEqual(JSON.parse(await fs.readFile(path.join(dir, target), 'utf8')), []);
    assert.equal(outcome.rows, 0);
  });

  test('a missing page fails the merge and leaves the previous export file as it was', async () => {
    const { staging, dir } = await staged({ 0: [row('/a', 1)] });
    const target = 'visitors.csv';
    await fs.writeFile(path.join(dir, target), 'previous export\n');
    await assert.rejects(mergeStagedPages({ staging, offsets: [0, 1], format: 'csv', target }), {
      type: 'ExportStagingMissing',
    });
    assert.equal(await fs.readFile(path.join(dir, target), 'utf8'), 'previous export\n');
    assert.deepEqual(
      (await fs.readdir(dir)).filter((name) => name.endsWith('.tmp')),
      [],
    );
  });

  test('lists at most 20 duplicated paths but counts them all', async () => {
    const rows = Array.from({ length: 30 }, (_, i) => row(`/p${i}`, i));
    const { staging } = await staged({ 0: rows, 1: rows });
    const outcome = await mergeStagedPages({
      staging,
      offsets: [0, 1],
      format: 'ndjson',
      target: 'v',
    });
    assert.equal(outcome.duplicateCount, 30);
    assert.equal(outcome.duplicatePaths.length, 20);
    assert.equal(outcome.rows, 30);
  });
  test('an export larger than one write chunk arrives whole, in order, with multi-byte paths intact', async () => {
    // 3 pages of 250 rows with 600-character paths: over 450,000 characters, so the merge writes several chunks.
    const long = (n: number) => `/docs/é文😀-${n}-${'x'.repeat(600)}`;
    const pages = [0, 1, 2].map((page) =>
      Array.from({ length: 250 }, (_, i) => row(long(page * 250 + i), i)),
    );
    const { staging, dir } = await staged({ 0: pages[0] ?? [], 250: pages[1] ?? [], 500: pages[2] ?? [] });
    const target = 'visitors.csv';
    const outcome = await mergeStagedPages({ staging, offsets: [0, 250, 500], format: 'csv', target });

    const expected =
      'path,human,ai,total\n' +
      pages
        .flat()
        .map((r) => `${r.path},${r.human},${r.ai},${r.total}\n`)
        .join('');
    assert.ok(expected.length > 450_000);
    const written = await fs.readFile(path.join(dir, target));
    assert.equal(written.toString('utf8'), expected);
    assert.equal(outcome.bytes, Buffer.byteLength(expected));
    assert.equal(outcome.sha256, createHash('sha256').update(expected).digest('hex'));
    assert.equal(outcome.rows, 750);
  });

  test('a path repeated on its page after being skipped there is skipped again', async () => {
    const { staging, dir } = await staged({
      0: [row('/a', 1)],
      1: [row('/b', 2), row('/a', 3), row('/c', 4), row('/a', 5), row('/b', 6)],
    });
    const target = 'visitors.csv';
    const outcome = await mergeStagedPages({ staging, offsets: [0, 1], format: 'csv', target });
    assert.equal(
      await fs.readFile(path.join(dir, target), 'utf8'),
      'path,human,ai,total\n/a,1,0,1\n/b,2,0,2\n/c,4,0,4\n',
    );
    assert.deepEqual(outcome.duplicatePaths, ['/a', '/a', '/b']);
    assert.equal(outcome.duplicateCount, 3);
  });

  test('chunks of runs stopped early, beside stray chunks, merge to the file one-page chunks give', async () => {
    // 40 pages of 3 rows; from page 20 on, each repeats a path of the page 20 before it (across chunks).
    const rowsOf = (index: number): VisitorRow[] => [
      row(`/p${index}-a`, 1),
      row(`/p${index}-b`, 2),
      row(index < 20 ? `/p${index}-c` : `/p${index - 20}-a`, 3),
    ];
    const offsets = Array.from({ length: 40 }, (_, i) => i * 3);
    const alone = await staged(Object.fromEntries(offsets.map((offset, i) => [offset, rowsOf(i)])));
    const pagesOf = (from: number, to: number) =>
      offsets.slice(from, to).map((offset) => ({ offset, rows: rowsOf(offset / 3) }));
    const stray = (from: number, to: number) =>
      offsets.slice(from, to).map((offset) => ({ offset, rows: [row(`/stray-${offset}`, 1)] }));

    const mixed = await staged({});
    // A run from page 0 that died before any heartbeat: attempt 2 at the same offset holds what was counted.
    await mixed.staging.writeChunk({ runOffset: 0, attempt: 1 }, stray(0, 16));
    await mixed.staging.writeChunk({ runOffset: 0, attempt: 2 }, pagesOf(0, 16));
    // Its chunk 16-19 failed late (the object is there): a run from page 16 fetched them again, one a chunk.
    await mixed.staging.writeChunk({ runOffset: 0, attempt: 2 }, stray(16, 20));
    for (const page of pagesOf(16, 20)) await mixed.staging.writeChunk({ runOffset: 48, attempt: 1 }, [page]);
    // The next run died after its heartbeat reported 20-35; the run from 36 wrote 36-39.
    await mixed.staging.writeChunk({ runOffset: 60, attempt: 1 }, pagesOf(20, 36));
    await mixed.staging.writeChunk({ runOffset: 60, attempt: 1 }, stray(36, 40));
    await mixed.staging.writeChunk({ runOffset: 108, attempt: 1 }, pagesOf(36, 40));

    const target = 'visitors.csv';
    const expected = await mergeStagedPages({ staging: alone.staging, offsets, format: 'csv', target });
    const outcome = await mergeStagedPages({ staging: mixed.staging, offsets, format: 'csv', target });
    assert.equal(
      await fs.readFile(path.join(mixed.dir, target), 'utf8'),
      await fs.readFile(path.join(alone.dir, target), 'utf8'),
    );
    assert.deepEqual(outcome, expected);
    assert.equal(expected.duplicateCount, 20);
  });

  test('each chunk is read once, and once more at most to confirm duplicates; the folder is listed once', async () => {
    const dir = await tempDir('merge');
    const destination = new CountingDestination(dir);
    const staging = new ExportStaging(destination, 'k');
    await staging.prepare();
    // Three chunks of 16 pages; every page of the third repeats a path of a page of the first.
    const rowsOf = (index: number): VisitorRow[] => [row(`/p${index}`, 1), row(`/q${index % 32}`, 2)];
    for (const first of [0, 16, 32]) {
      const pages = Array.from({ length: 16 }, (_, i) => ({ offset: first + i, rows: rowsOf(first + i) }));
      await staging.writeChunk({ runOffset: first, attempt: 1 }, pages);
    }
    const offsets = Array.from({ length: 48 }, (_, i) => i);
    destination.reads.clear();
    const outcome = await mergeStagedPages({ staging, offsets, format: 'ndjson', target: 'v' });
    assert.equal(outcome.duplicateCount, 16);
    assert.equal(destination.listings, 1);
    assert.deepEqual([...destination.reads.values()].sort(), [1, 1, 2]);
  });

  test('paths that share a fingerprint are both written: a match is confirmed on the paths themselves', async () => {
    const { staging, dir } = await staged({
      0: [row('/a', 1), row('/b', 2)],
      1: [row('/c', 3), row('/a', 9)],
      2: [row('/d', 4), row('/c', 9), row('/d', 9)],
    });
    // Every path has the same fingerprint: each one is a match, and only true repeats are skipped.
    const outcome = await mergeStagedPages({
      staging,
      offsets: [0, 1, 2],
      format: 'csv',
      target: 'v.csv',
      fingerprint: () => [7, 7],
    });
    assert.equal(
      await fs.readFile(path.join(dir, 'v.csv'), 'utf8'),
      'path,human,ai,total\n/a,1,0,1\n/b,2,0,2\n/c,3,0,3\n/d,4,0,4\n',
    );
    assert.deepEqual(
      { rows: outcome.rows, duplicates: outcome.duplicatePaths },
      { rows: 4, duplicates: ['/a', '/c', '/d'] },
    );
  });

  test('a page no chunk holds fails the merge, naming its offset', async () => {
    const { staging } = await staged({});
    await staging.writeChunk(
      { runOffset: 0, attempt: 1 },
      [0, 1, 2].map((offset) => ({ offset, rows: [] })),
    );
    await assert.rejects(mergeStagedPages({ staging, offsets: [0, 1, 2, 3], format: 'csv', target: 'v' }), {
      type: 'ExportStagingMissing',
      message: /1 staged page\(s\) not found .*\(offsets 3\)/,
    });
  });
});

/** A local destination that counts its listings and the reads of each staged object. */
class CountingDestination extends LocalDestination {
  listings = 0;
  readonly reads = new Map<string, number>();

  override listFinal(prefix: string): Promise<string[]> {
    this.listings += 1;
    return super.listFinal(prefix);
  }

  override readFinal(key: string): Promise<string | undefined> {
    this.reads.set(key, (this.reads.get(key) ?? 0) + 1);
    return super.readFinal(key);
  }
}
