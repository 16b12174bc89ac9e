import type { SentFollowUps } from './agent-job';
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

/**
 * What the ledger keeps of a messageId: FNV-1a (64 bit) of its UTF-16 code units, 16 hex digits, so that 10,000 ids
 * take 190 KB of state whatever their length. Two ids with one key (about 3 in 10^12 at 10,000 ids) make the second
 * a duplicate, refused: never a message sent twice.
 */
export function messageIdKey(messageId: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < messageId.length; i++) {
    hash = ((hash ^ BigInt(messageId.charCodeAt(i))) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

type SentStatus = 'delivered' | 'outcome_unknown';

/**
 * The messageIds the service may have received for one job, by key: delivered, or outcome unknown (a send whose
 * answer never came, in flight included). Never trimmed: FOLLOW_UP_LIMITS.maxPerJob bounds it. A follow-up the
 * service refused, or never got, leaves it. Carried across continue-as-new and into a new run of a closed job.
 */
export class SentFollowUpLedger {
  readonly #status = new Map<string, SentStatus>();

  constructor(carried?: SentFollowUps) {
    this.add(carried);
  }

  /** Takes in another run's ledger of the same job: a delivered id stays delivered. */
  add(carried: SentFollowUps | undefined): void {
    for (const key of carried?.outcomeUnknown ?? []) {
      if (!this.#status.has(key)) this.#status.set(key, 'outcome_unknown');
    }
    for (const key of carried?.delivered ?? []) this.#status.set(key, 'delivered');
  }

  get size(): number {
    return this.#status.size;
  }

  statusOf(messageId: string): SentStatus | undefined {
    return this.#status.get(messageIdKey(messageId));
  }

  set(messageId: string, status: SentStatus): void {
    this.#status.set(messageIdKey(messageId), status);
  }

  delete(messageId: string): void {
    this.#status.delete(messageIdKey(messageId));
  }

  toJSON(): SentFollowUps {
    const sent: SentFollowUps = { delivered: [], outcomeUnknown: [] };
    for (const [key, status] of this.#status) {
      (status === 'delivered' ? sent.delivered : sent.outcomeUnknown).push(key);
    }
    return sent;
  }
}
