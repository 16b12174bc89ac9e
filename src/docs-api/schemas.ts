import { z } from 'zod';
import { agentJobSchema, type AgentJob } from '../contract/agent-job';

/** A parsed answer and what was dropped from it: fields the worker does not need whose type was not the documented one. */
export interface Lenient<T> {
  value: T;
  warnings: string[];
}

/** The shape of zod's safeParse, so that a schema or a lenient parser can read an answer. */
export type ParseOutcome<T> = { success: true; data: T } | { success: false; error: z.ZodError };

/** What the worker uses of a job answer, parsed strictly: a missing or odd `id`, `status` or `prLink` fails it. */
const usedJobFieldsSchema = z.object({
  id: agentJobSchema.shape.id,
  status: agentJobSchema.shape.status,
  prLink: z.string().nullish(),
});

const sourceShape = agentJobSchema.shape.source.unwrap().shape;

/**
 * Parses a job answer: `id`, `status` and `prLink` strictly, every other documented field on its own. A field of
 * an unexpected type is dropped with a warning (never the whole answer: a created job's id is never lost); null
 * stands for an absent `model`, `createdAt` or `source.repository`; fields the interface does not list are ignored.
 */
export function parseJobAnswer(json: unknown): ParseOutcome<Lenient<AgentJob>> {
  const used = usedJobFieldsSchema.safeParse(json);
  if (!used.success) return used;
  const raw = isObject(json) ? json : {};
  const warnings: string[] = [];
  const job: Record<string, unknown> = {
    id: used.data.id,
    status: used.data.status,
    prLink: used.data.prLink ?? null,
  };
  keepIfValid(job, 'model', raw.model, agentJobSchema.shape.model, warnings);
  keepIfValid(job, 'createdAt', raw.createdAt, agentJobSchema.shape.createdAt, warnings);
  if (raw.archivedAt !== undefined) {
    keepIfValid(job, 'archivedAt', raw.archivedAt, agentJobSchema.shape.archivedAt, warnings, true);
  }
  if (isObject(raw.source)) {
    const source: Record<string, unknown> = {};
    keepIfValid(
      source,
      'repository',
      raw.source.repository,
      sourceShape.repository,
      warnings,
      false,
      'source.',
    );
    if (raw.source.ref !== undefined) {
      keepIfValid(source, 'ref', raw.source.ref, sourceShape.ref, warnings, true, 'source.');
    }
    job.source = source;
  } else if (raw.source != null) {
    warnings.push(dropped('source', raw.source));
  }
  // Every kept field passed its own schema, so the whole cannot fail; parsing again gives the type without a cast.
  return { success: true, data: { value: agentJobSchema.parse(job), warnings } };
}

function keepIfValid(
  target: Record<string, unknown>,
  key: string,
  value: unknown,
  schema: z.ZodType,
  warnings: string[],
  keepNull = false,
  prefix = '',
): void {
  if (value === undefined || (value === null && !keepNull)) return;
  if (schema.safeParse(value).success) target[key] = value;
  else warnings.push(dropped(`${prefix}${key}`, value));
}

function dropped(field: string, value: unknown): string {
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return `response field ${field}: unexpected type ${type}, dropped`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
