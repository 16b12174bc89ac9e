import { MAX_MESSAGE_ID_CHARS, MAX_PROMPT_CHARS, promptTextIssue } from './agent-job-constants';
import type { InputIssue } from './input-error';

const REQUEST_KEYS = new Set(['prompt', 'messageId']);

/**
 * The rules of the contract's `followUpRequestSchema`, written out by hand with zod's own messages, for the
 * workflow sandbox: the `sendFollowUp` update validator must be synchronous, and zod must not be evaluated in
 * the sandbox (docs/agent-job.md, "Validation and the sandbox"). test/contract/follow-up-checks.test.ts runs a
 * table of requests through both and requires the same issues.
 */
export function followUpRequestIssues(raw: unknown, subject: string): InputIssue[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return [{ field: subject, rule: `Invalid input: expected object, received ${kindOf(raw)}` }];
  }
  const request = raw as Record<string, unknown>;
  const issues: InputIssue[] = [];
  const prompt = request.prompt;
  if (typeof prompt !== 'string') {
    issues.push({ field: 'prompt', rule: 'is required and must be a string' });
  } else {
    const textRule = promptTextIssue(prompt);
    if (textRule !== undefined) issues.push({ field: 'prompt', rule: textRule });
    if (prompt.length > MAX_PROMPT_CHARS) {
      issues.push({ field: 'prompt', rule: `must be at most ${MAX_PROMPT_CHARS} characters` });
    }
  }
  const messageId = request.messageId;
  if (messageId !== undefined) {
    if (typeof messageId !== 'string') issues.push({ field: 'messageId', rule: 'must be a string' });
    else if (messageId.length < 1) issues.push({ field: 'messageId', rule: 'must not be empty' });
    else if (messageId.length > MAX_MESSAGE_ID_CHARS) {
      issues.push({ field: 'messageId', rule: `must be at most ${MAX_MESSAGE_ID_CHARS} characters` });
    }
  }
  const unknown = Object.keys(request).filter((key) => !REQUEST_KEYS.has(key));
  if (unknown.length > 0) {
    const names = unknown.map((key) => `"${key}"`).join(', ');
    issues.push({ field: subject, rule: `Unrecognized key${unknown.length > 1 ? 's' : ''}: ${names}` });
  }
  return issues;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
