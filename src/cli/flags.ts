import { parseArgs } from 'node:util';
import { z } from 'zod';
import { InputValidationError } from '../contract/input-error';
import { projectIdSchema } from '../contract/validation';
import { UsageError } from './usage-error';

/**
 * One flag of a command. `rule` is the contract's own schema for the value (applied to the text given), checked
 * with every other flag before the command runs: a bad value exits 2 naming the flag and the rule, and nothing
 * connects. Help shows `rule`'s `hint` beside the flag.
 */
export interface FlagDef {
  type: 'string' | 'boolean';
  description: string;
  required?: boolean;
  rule?: z.ZodType;
  /** One-letter alias, e.g. `h` for `-h`. */
  short?: string;
  /** The input field the flag sets, when not its camel-case name (`--from` sets `dateFrom`). */
  field?: string;
}

export type FlagSpec = Record<string, FlagDef>;

/** Parsed flags: a string for a valued flag, true for a boolean one, undefined when absent. */
export type Flags = Record<string, string | boolean | undefined>;

/** The connection flags: each overrides its variable (or the config file's profile) for this command. */
export const CONNECTION_FLAGS: FlagSpec = {
  address: { type: 'string', description: 'Temporal host:port (overrides TEMPORAL_ADDRESS)' },
  namespace: { type: 'string', description: 'Temporal namespace (overrides TEMPORAL_NAMESPACE)' },
  profile: {
    type: 'string',
    description: 'profile of the Temporal config file, TEMPORAL_CONFIG_FILE (overrides TEMPORAL_PROFILE)',
  },
};

/** `--project`, required: the project a command acts on. */
export const PROJECT_FLAG: FlagDef = {
  type: 'string',
  description: 'project id',
  required: true,
  rule: projectIdSchema,
  field: 'projectId',
};

/** Flags every command takes. */
export const COMMON_FLAGS: FlagSpec = {
  ...CONNECTION_FLAGS,
  json: { type: 'boolean', description: 'print machine-readable JSON (errors too)' },
  help: { type: 'boolean', description: 'show this help', short: 'h' },
  version: { type: 'boolean', description: "print docs-agent's version" },
};

/**
 * Parses `--flag value` arguments strictly, the command's own and the common ones: an unknown flag, a positional,
 * a missing required flag or a value breaking its rule is a UsageError naming the flag. With --help or
 * --version nothing else is checked.
 */
export function parseFlags(argv: string[], spec: FlagSpec): Flags {
  const all = { ...spec, ...COMMON_FLAGS };
  let values: Flags;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: Object.fromEntries(
        Object.entries(all).map(([name, s]) => [
          name,
          { type: s.type, ...(s.short ? { short: s.short } : {}) },
        ]),
      ),
      strict: true,
      allowPositionals: false,
    }) as { values: Flags });
  } catch (error) {
    throw new UsageError(
      error instanceof Error ? error.message.replace(/\. To specify.*$/s, '') : String(error),
    );
  }
  if (values.help || values.version) return values;
  for (const [name, s] of Object.entries(all)) {
    const value = values[name];
    if (value === undefined) {
      if (s.required) throw new UsageError(`--${name} is required: ${s.description}`);
      continue;
    }
    if (typeof value === 'string' && value.trim() === '' && s.rule === undefined) {
      throw new UsageError(`--${name}: must not be empty`);
    }
    if (s.rule && typeof value === 'string') {
      const checked = s.rule.safeParse(value);
      if (!checked.success) {
        throw new UsageError(
          `--${name}: ${checked.error.issues[0]?.message ?? 'is invalid'} (got "${value.slice(0, 60)}")`,
        );
      }
    }
  }
  return values;
}

/** The help of one command: usage, its options, the common options and the environment variables it reads. */
export function helpText(usage: string, spec: FlagSpec, env: readonly string[], notes = ''): string {
  const rows = (flags: FlagSpec) =>
    Object.entries(flags)
      .map(
        ([name, s]) =>
          `  ${s.short ? `-${s.short}, ` : ''}--${name}${s.type === 'string' ? ' <value>' : ''}${s.required ? ' (required)' : ''}\n      ${s.description}`,
      )
      .join('\n');
  const own = Object.keys(spec).length === 0 ? '' : `Options:\n${rows(spec)}\n\n`;
  return (
    `Usage: ${usage}\n\n${notes ? `${notes}\n\n` : ''}${own}Common options:\n${rows(COMMON_FLAGS)}\n\n` +
    `Environment (a flag above wins over its variable):\n${env.map((line) => `  ${line}`).join('\n')}\n`
  );
}

/** A rule for an integer flag: the text must be a whole number, then the contract's schema applies. */
export function intRule(schema: z.ZodType): z.ZodType {
  return z.string().transform((text, ctx) => {
    if (!/^\s*-?\d+\s*$/.test(text)) {
      ctx.addIssue({ code: 'custom', message: 'must be an integer' });
      return z.NEVER;
    }
    const checked = schema.safeParse(Number(text));
    if (checked.success) return checked.data;
    for (const issue of checked.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
    return z.NEVER;
  });
}

/** An optional integer flag, already checked by its rule (or checked here when it has none). */
export function intFlag(value: string | boolean | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = z.coerce.number().int().safeParse(value);
  if (!parsed.success || typeof value !== 'string' || value.trim() === '') {
    throw new UsageError(`--${name}: must be an integer, got "${String(value)}"`);
  }
  return parsed.data;
}

export function stringFlag(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * An input error of the contract (fields `dateTo`, `polling.deadline`) said in the command's words: each field a
 * flag sets is named as that flag. Other errors are returned as they are.
 */
export function inFlagTerms(error: unknown, spec: FlagSpec): unknown {
  if (!(error instanceof InputValidationError)) return error;
  const flagOf = new Map(
    Object.entries(spec).map(([name, flag]) => [
      flag.field ?? name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase()),
      `--${name}`,
    ]),
  );
  const named = error.issues.map((issue) => ({ ...issue, field: flagOf.get(issue.field) ?? issue.field }));
  if (named.every((issue, i) => issue.field === error.issues[i]?.field)) return error;
  return new UsageError(named.map((issue) => `${issue.field}: ${issue.rule}`).join('; '));
}
