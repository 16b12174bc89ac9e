import type { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { agentJobSchema, type AgentJob } from '../contract/agent-job';
import { docsApiFailure, type FailureFacts } from './failures';

/**
 * The shape of zod's safeParse, so that a schema or a lenient parser can read an answer; `warn` is told of each
 * field the parser dropped (a field the worker does not need whose type was not the documented one).
 */
export type ParseOutcome<T> = { success: true; data: T } | { success: false; error: z.ZodError };
export type AnswerParser<T> = (json: unknown, warn: (warning: string) => void) => ParseOutcome<T>;

/** The interface documents a string id; a whole number is read as its digits, so that the job it names is not lost. */
const jobIdSchema = z.preprocess(
  (id) => (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? String(id) : id),
  agentJobSchema.shape.id,
);

/** What the worker uses of a job answer, parsed strictly: a missing or odd `id`, `status` or `prLink` fails it. */
const usedJobFieldsSchema = z.object({
  id: jobIdSchema,
  status: agentJobSchema.shape.status,
  prLink: z.string().nullish(),
});

const { id: _id, status: _status, prLink: _prLink, ...optionalJobShape } = agentJobSchema.shape;
const sourceShape = agentJobSchema.shape.source.unwrap().shape;
/** The fields whose null the service documents, kept as null; elsewhere a null stands for an absent field. */
const NULL_KEPT = new Set(['archivedAt', 'source.ref']);

/**
 * Parses a job answer: `id`, `status` and `prLink` strictly, every other documented field on its own. A field of
 * an unexpected type is dropped with a warning (never the whole answer: a created job's id is never lost), and so
 * is each odd field inside `source`; fields the interface does not list are ignored.
 */
export const parseJobAnswer: AnswerParser<AgentJob> = (json, warn) => {
  const used = usedJobFieldsSchema.safeParse(json);
  if (!used.success) return used;
  const { id } = used.data;
  // It parsed as an object.
  const raw = json as Record<string, unknown>;
  if (typeof raw.id === 'number') warn(`response field id: a number (${id}), kept as text`);
  const job = {
    ...keptFields(optionalJobShape, raw, '', warn),
    id,
    status: used.data.status,
    prLink: used.data.prLink ?? null,
  };
  // Every kept field passed its own schema, so the whole cannot fail; parsing again gives the type without a cast.
  return { success: true, data: agentJobSchema.parse(job) };
};

/** The fields of `raw` that pass their own schema in `shape`; each that does not becomes a warning. */
function keptFields(
  shape: Record<string, z.ZodType>,
  raw: Record<string, unknown>,
  prefix: string,
  warn: (warning: string) => void,
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(shape)) {
    const field = `${prefix}${key}`;
    const value = raw[key];
    if (value === undefined || (value === null && !NULL_KEPT.has(field))) continue;
    if (field === 'source' && isObject(value)) kept[key] = keptFields(sourceShape, value, 'source.', warn);
    else if (schema.safeParse(value).success) kept[key] = value;
    else warn(dropped(field, value));
  }
  return kept;
}

function dropped(field: string, value: unknown): string {
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return `response field ${field}: unexpected type ${type}, dropped`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The parsed body of a 2xx answer, or a MalformedResponseError failure. A 2xx means the service acted: a malformed
 * answer to a create or message leaves its outcome unknown. So the body is read whatever the content type says, a
 * JSON body is used, and a job answer that fails its schema but names a job keeps that id (`namesJob`).
 */
export function answerOf<T>(
  answer: { text: string; contentType: string },
  parse: AnswerParser<T>,
  facts: FailureFacts,
  options: { namesJob: boolean; onWarning?: ((warning: string) => void) | undefined },
): T {
  const { contentType } = answer;
  const typedJson = /[/+]json\b/i.test(contentType);
  const malformed = (message: string, field: string, jobId?: string): ApplicationFailure =>
    docsApiFailure('malformedResponse', message, { ...facts, field, jobId });
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    if (!typedJson) {
      throw malformed(
        `expected a JSON response, got content-type "${contentType || 'none'}"`,
        'content-type',
      );
    }
    throw malformed('response body is not valid JSON', 'body');
  }
  if (!typedJson) {
    options.onWarning?.(`response content-type "${contentType || 'none'}": the body was read as JSON`);
  }
  const parsed = parse(json, (warning) => options.onWarning?.(warning));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
  const jobId = options.namesJob ? answeredJobId(json) : undefined;
  throw malformed(
    `response field ${field}: ${issue?.message ?? 'does not match the schema'}` +
      (jobId === undefined ? '' : ` (the answer names job ${jobId})`),
    field,
    jobId,
  );
}

/** The `id` of a job answer that failed its schema, when it is a usable one (a numeric id as its digits). */
function answeredJobId(json: unknown): string | undefined {
  if (!isObject(json)) return undefined;
  const parsed = jobIdSchema.safeParse(json.id);
  return parsed.success && parsed.data.length <= 256 ? parsed.data : undefined;
}
