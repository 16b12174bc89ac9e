import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  followUpRequestIssues,
  followUpRequestSchema,
  MAX_MESSAGE_ID_CHARS,
  MAX_PROMPT_CHARS,
} from '../../src/contract/agent-job';
import { InputValidationError, parseOrThrow } from '../../src/contract/validation';
import { signalCases, updateCases } from '../bad-input/cases';

const SUBJECT = 'follow-up';

/** What the contract's zod schema says of a value: the issues parseOrThrow would throw, or none. */
function zodIssues(value: unknown): readonly { field: string; rule: string }[] {
  try {
    parseOrThrow(followUpRequestSchema, value, SUBJECT);
    return [];
  } catch (error) {
    if (error instanceof InputValidationError) return error.issues;
    throw error;
  }
}

const atLimit = (chars: number, fill = 'p') => fill.repeat(chars);

/** Requests at every rule's edges, both sides, and the shapes a JSON payload can take. */
const TABLE: { name: string; value: unknown }[] = [
  { name: 'prompt only', value: { prompt: 'Also the FAQ' } },
  { name: 'prompt and messageId', value: { prompt: 'x', messageId: 'faq' } },
  { name: 'messageId undefined', value: { prompt: 'x', messageId: undefined } },
  { name: 'prompt at the limit', value: { prompt: atLimit(MAX_PROMPT_CHARS) } },
  { name: 'prompt over the limit', value: { prompt: atLimit(MAX_PROMPT_CHARS + 1) } },
  { name: 'blank prompt over the limit', value: { prompt: atLimit(MAX_PROMPT_CHARS + 1, ' ') } },
  { name: 'prompt of whitespace and newlines', value: { prompt: ' \n\t ' } },
  { name: 'prompt with surrounding spaces', value: { prompt: '  x  ' } },
  { name: 'prompt null', value: { prompt: null } },
  { name: 'prompt a number', value: { prompt: 5 } },
  { name: 'prompt an object', value: { prompt: { text: 'x' } } },
  { name: 'prompt missing', value: {} },
  { name: 'messageId only', value: { messageId: 'm' } },
  { name: 'messageId at the limit', value: { prompt: 'x', messageId: atLimit(MAX_MESSAGE_ID_CHARS, 'm') } },
  { name: 'messageId over the limit', value: { prompt: 'x', messageId: atLimit(MAX_MESSAGE_ID_CHARS + 1) } },
  { name: 'messageId empty', value: { prompt: 'x', messageId: '' } },
  { name: 'messageId null', value: { prompt: 'x', messageId: null } },
  { name: 'messageId a number', value: { prompt: 'x', messageId: 7 } },
  { name: 'both fields wrong', value: { prompt: '', messageId: 7 } },
  { name: 'one unknown field', value: { prompt: 'x', urgent: true } },
  { name: 'two unknown fields', value: { prompt: 'x', urgent: true, 'odd "key"': 1 } },
  { name: 'unknown field and bad prompt', value: { prompt: 1, extra: 1 } },
  { name: 'a string', value: 'Also the FAQ' },
  { name: 'a number', value: 42 },
  { name: 'a boolean', value: true },
  { name: 'null', value: null },
  { name: 'nothing', value: undefined },
  { name: 'an array', value: [{ prompt: 'x' }] },
  ...updateCases.map((c) => ({ name: `update matrix: ${c.name}`, value: c.arg })),
  ...signalCases.map((c) => ({ name: `signal matrix: ${c.name}`, value: c.arg })),
];

describe('follow-up checks written for the sandbox match the contract schema', () => {
  test('the table covers valid and invalid requests', () => {
    const valid = TABLE.filter((row) => zodIssues(row.value).length === 0).length;
    assert.ok(valid >= 4 && valid < TABLE.length - 20, `${valid} valid of ${TABLE.length}`);
  });

  for (const row of TABLE) {
    test(row.name, () => {
      assert.deepEqual(followUpRequestIssues(row.value, SUBJECT), zodIssues(row.value));
    });
  }
});
