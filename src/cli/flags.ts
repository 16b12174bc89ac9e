import { parseArgs } from 'node:util';
import { z } from 'zod';
import { UsageError } from './usage-error';

export type FlagSpec = Record<
  string,
  { type: 'string' | 'boolean'; description: string; required?: boolean }
>;

const COMMON: FlagSpec = {
  json: { type: 'boolean', description: 'print machine-readable JSON' },
  help: { type: 'boolean', description: 'show this help' },
};

/** Parses `--flag value` arguments strictly: unknown flags, missing required flags and positionals are errors. */
/** Parsed flags: a string for a valued flag, true for a boolean one, undefined when absent. */
export type Flags = Record<string, string | boolean | undefined>;

export function parseFlags(argv: string[], spec: FlagSpec): Flags {
  const all = { ...spec, ...COMMON };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: Object.fromEntries(Object.entries(all).map(([name, s]) => [name, { type: s.type }])),
      strict: true,
      allowPositionals: false,
    }) as { values: Record<string, string | boolean | undefined> });
  } catch (error) {
    throw new UsageError(
      error instanceof Error ? error.message.replace(/\. To specify.*$/s, '') : String(error),
    );
  }
  if (values.help) return values;
  for (const [name, s] of Object.entries(spec)) {
    if (s.required && values[name] === undefined)
      throw new UsageError(`--${name} is required: ${s.description}`);
  }
  return values;
}

export function helpText(usage: string, spec: FlagSpec): string {
  const rows = Object.entries({ ...spec, ...COMMON }).map(
    ([name, s]) =>
      `  --${name}${s.type === 'string' ? ' <value>' : ''}${s.required ? ' (required)' : ''}\n      ${s.description}`,
  );
  return `Usage: ${usage}\n\nOptions:\n${rows.join('\n')}\n`;
}

/** An optional positive integer flag, named in the error. */
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
