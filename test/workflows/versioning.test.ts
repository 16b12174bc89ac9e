import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import * as workflows from '../../src/workflows';
import { VERSIONING_BEHAVIOR } from '../../src/worker';

test("docs/upgrading.md's table gives each workflow type the worker registers its behaviour", () => {
  const doc = fs.readFileSync(path.resolve(__dirname, '../../docs/upgrading.md'), 'utf8');
  const behavior = VERSIONING_BEHAVIOR;
  for (const type of Object.keys(workflows)) {
    const row = doc
      .split('\n')
      .find((line) => line.startsWith('| ') && (line.split('|')[1] ?? '').includes(`\`${type}\``));
    assert.ok(row, `a row for ${type}`);
    assert.match(row.split('|')[2] ?? '', new RegExp(`^ ${behavior}\\b`), `${type}: ${behavior}`);
  }
});
