import { z } from 'zod';
import { agentJobSchema, type AgentJob } from '../contract/agent-job';

/** A parsed answer and what was dropped from it: fields the worker does not need whose type was not the documented one. */
export interface Lenient<T> {
  value: T;
  warnings: string[];
}

/** The shape of zod's safeParse, so that a schema or a lenient parser can read an answer. */
export type ParseOutcome<T> = { success: true; data: T } | { success: false; error: z.ZodError };

/** The interface documents a string id; a whole number is read as its digits, so that the job it names is not lost. */
const jobIdSchema = z.preprocess(
  (id) => (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? String(id) : id),
  agentJobSchema.shape.id,
);

/** A job id as text (a numeric id as its digits), or undefined when the value is no usable id. */
export function jobIdText(id: unknown): string | undefined {
  const parsed = jobIdSchema.safeParse(id);
  return parsed.success ? parsed.data : undefined;
}

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
export function parseJobAnswer(json: unknown): ParseOutcome<Lenient<AgentJob>> {
  const used = usedJobFieldsSchema.safeParse(json);
  if (!used.success) return used;
  const warnings: string[] = [];
  const { id } = used.data;
  if (isObject(json) && typeof json.id === 'number') {
    warnings.push(`response field id: a number (${id}), kept as text`);
  }
  const job = {
    ...keptFields(optionalJobShape, isObject(json) ? json : {}, '', warnings),
    id,
    status: used.data.status,
    prLink: used.data.prLink ?? null,
  };
  // Every kept field passed its own schema, so the whole cannot fail; parsing again gives the type without a cast.
  return { success: true, data: { value: agentJobSchema.parse(job), warnings } };
}

/** The fields of `raw` that pass their own schema in `shape`; each that does not becomes a warning. */
function keptFields(
  shape: Record<string, z.ZodType>,
  raw: Record<string, unknown>,
  prefix: string,
  warnings: string[],
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(shape)) {
    const field = `${prefix}${key}`;
    const value = raw[key];
    if (value === undefined || (value === null && !NULL_KEPT.has(field))) continue;
    if (field === 'source' && isObject(value))
      kept[key] = keptFields(sourceShape, value, 'source.', warnings);
    else if (schema.safeParse(value).success) kept[key] = value;
    else warnings.push(dropped(field, value));
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
