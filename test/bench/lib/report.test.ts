import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { KEPT_NOTES_MARKER, recordSection } from '../../../bench/lib/report';

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
