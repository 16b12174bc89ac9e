import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { HISTORY_HEADING, KEPT_NOTES_MARKER, recordSection } from '../../../bench/lib/report';

test('a section recorded again replaces its figures, keeps its hand-written notes and the other sections', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'report-'));
  const file = path.join(dir, 'benchmarks.md');
  try {
    fs.writeFileSync(
      file,
      `# Benchmarks\n\n## A\n\nold figures\n\n${KEPT_NOTES_MARKER}\n\nWhy the figures moved.\n\n## B\n\nother\n`,
    );
    await recordSection('A', 'new figures', file);
    const doc = fs.readFileSync(file, 'utf8');
    assert.equal(
      doc,
      `# Benchmarks\n\n## A\n\nnew figures\n\n${KEPT_NOTES_MARKER}\n\nWhy the figures moved.\n\n## B\n\nother\n`,
    );
    await recordSection('C', 'appended', file);
    assert.match(fs.readFileSync(file, 'utf8'), /## B\n\nother\n\n## C\n\nappended\n$/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a new section goes before the history of superseded runs; the last section stops at it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'report-'));
  const file = path.join(dir, 'benchmarks.md');
  try {
    fs.writeFileSync(
      file,
      `# Benchmarks\n\n## A\n\nold\n\n${HISTORY_HEADING}\n\n### A, 2026-11-01\n\nolder\n`,
    );
    await recordSection('A', 'new', file);
    await recordSection('B', 'added', file);
    assert.equal(
      fs.readFileSync(file, 'utf8'),
      `# Benchmarks\n\n## A\n\nnew\n\n## B\n\nadded\n\n${HISTORY_HEADING}\n\n### A, 2026-11-01\n\nolder\n`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
