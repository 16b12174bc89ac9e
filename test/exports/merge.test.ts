import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { VisitorRow } from '../../src/contract/visitors-export';
import { mergeStagedPages } from '../../src/exports/merge';
import { ExportStaging } from '../../src/exports/staging';
import { tempDir } from '../helpers/temp-dir';

const row = (p: string, total: number): VisitorRow => ({ path: p, human: total, ai: 0, total });

/** Stages the pages (offset → rows) of one export in a fresh directory. */
async function staged(pages: Record<number, VisitorRow[]>): Promise<{ staging: ExportStaging; dir: string }> {
  const dir = await tempDir('merge');
  const staging = new ExportStaging(dir, 'visitors-export/acme/k');
  await staging.prepare();
  for (const [offset, rows] of Object.entries(pages)) await staging.writePage(Number(offset), rows);
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
      name: 'StagingMissingError',
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
});
