import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { codeSize, codeSizeTable } from '../../bench/code-size';
import { tempDir } from '../helpers/temp-dir';

test('code size: each set counts the newlines of its TypeScript files, by path prefix', async () => {
  const src = await tempDir('code-size');
  const files: Record<string, string> = {
    'client/agent-job.ts': 'a\nb\n',
    'client/agent-job-runs.ts': 'a\nb\nc\n',
    'client/connect.ts': 'a\n',
    'workflows/agent-job/workflow.ts': 'a\nb\nc\nd\n',
    'exports/merge.ts': 'a\nb\nc\nd\ne\n',
    'exports/README.md': 'not code\n',
  };
  for (const [file, text] of Object.entries(files)) {
    await fs.mkdir(path.join(src, path.dirname(file)), { recursive: true });
    await fs.writeFile(path.join(src, file), text);
  }
  const [all, agentJob, exportsSet] = codeSize(src);
  assert.deepEqual(
    [all, agentJob, exportsSet].map((row) => [row?.files, row?.lines]),
    [
      [5, 15],
      [3, 9],
      [1, 5],
    ],
  );
  assert.match(
    codeSizeTable(codeSize(src)),
    /\| agent jobs \(issue 44\) \| 3 \| 9 \| ≤ 2000 lines \| met \|/,
  );
});
