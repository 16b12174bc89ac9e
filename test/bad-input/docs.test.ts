import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { describe, test } from 'node:test';
import { DOC_PATH, readable, renderDoc, renderTables } from './render-docs';
import * as cases from './cases';

describe('docs/bad-input.md', () => {
  test('is what `npm run docs:bad-input` writes from cases.ts', async () => {
    const committed = await fs.readFile(DOC_PATH, 'utf8');
    assert.ok(
      committed === (await renderDoc(committed)),
      'docs/bad-input.md differs from test/bad-input/cases.ts: run `npm run docs:bad-input` and commit the result',
    );
  });

  test('lists every row of every array of cases, numbered across the tables', () => {
    const tables = renderTables(cases);
    const rows = Object.values(cases).filter(Array.isArray).flat() as { name: string }[];
    assert.ok(rows.length > 100);
    assert.match(tables, new RegExp(`^${rows.length} cases\\.`));
    assert.match(tables, new RegExp(`\\n\\| ${rows.length} \\| `));
    for (const row of rows) assert.ok(tables.includes(`| ${row.name.replace(/\|/g, '\\|')} |`), row.name);
  });

  test('a row added to cases.ts appears in the tables with its expected text', () => {
    const added = {
      ...cases.clientCases[0]!,
      name: 'startAgentJob a case added later',
      rule: /^must be new$/,
    };
    const tables = renderTables({ ...cases, clientCases: [...cases.clientCases, added] });
    assert.match(
      tables,
      /\| startAgentJob a case added later \| `InputValidationError`, `prompt: must be new` \|/,
    );
  });

  test('an array of cases the script does not know fails instead of being left out', () => {
    assert.throws(
      () => renderTables({ ...cases, scheduleUpdateCases: [{ name: 'x' }] }),
      /cases\.ts exports scheduleUpdateCases/,
    );
  });

  test('a pattern reads as the text it expects', () => {
    assert.equal(
      readable(/^must be after dateFrom \(dateTo is exclusive\)$/),
      'must be after dateFrom (dateTo is exclusive)',
    );
    assert.equal(readable(/not found: .*agent-job\/.*\/k/), 'not found: …agent-job/…/k');
  });
});
