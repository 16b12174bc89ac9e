import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseJobAnswer } from '../../src/docs-api/schemas';

const base = { id: 'job_1', status: 'active', prLink: null };

function parsed(answer: unknown) {
  const warnings: string[] = [];
  const result = parseJobAnswer(answer, (warning) => warnings.push(warning));
  assert.ok(result.success, 'the answer was refused');
  return { value: result.data, warnings };
}

test('a complete answer is kept whole, without warnings', () => {
  const answer = {
    ...base,
    model: 'm-1',
    source: { repository: 'https://github.com/o/r', ref: 'main' },
    createdAt: '2026-11-01T00:00:00Z',
    archivedAt: null,
  };
  assert.deepEqual(parsed({ ...answer, extra: { any: 'thing' } }), { value: answer, warnings: [] });
});

test('odd fields inside source are dropped one by one', () => {
  const { value, warnings } = parsed({ ...base, source: { repository: 42, ref: 'main', commit: 'abc' } });
  assert.deepEqual(value.source, { ref: 'main' });
  assert.deepEqual(warnings, ['response field source.repository: unexpected type number, dropped']);
});

test('null is absent for model, createdAt and source.repository, and kept for archivedAt and source.ref', () => {
  const { value, warnings } = parsed({
    ...base,
    model: null,
    createdAt: null,
    archivedAt: null,
    source: { repository: null, ref: null },
  });
  assert.deepEqual(value, { ...base, archivedAt: null, source: { ref: null } });
  assert.deepEqual(warnings, []);
});

test('prLink omitted is null; an odd archivedAt or a source array is dropped with a warning', () => {
  const { value, warnings } = parsed({ id: 'job_1', status: 'completed', archivedAt: 17, source: [] });
  assert.deepEqual(value, { id: 'job_1', status: 'completed', prLink: null });
  assert.deepEqual(warnings, [
    'response field source: unexpected type array, dropped',
    'response field archivedAt: unexpected type number, dropped',
  ]);
});

for (const [name, answer, field] of [
  ['no id', { status: 'active' }, 'id'],
  ['an empty id', { ...base, id: '' }, 'id'],
  ['status a number', { ...base, status: 42 }, 'status'],
  ['prLink a number', { ...base, prLink: 7 }, 'prLink'],
  ['not an object', ['job_1'], undefined],
] as const) {
  test(`refused: ${name} (a field the worker uses)`, () => {
    const result = parseJobAnswer(answer, () => undefined);
    assert.equal(result.success, false);
    if (!result.success && field !== undefined) assert.deepEqual(result.error.issues[0]?.path, [field]);
  });
}
