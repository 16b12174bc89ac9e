import { formatWithOptions } from 'node:util';
import { DefaultLogger, makeTelemetryFilterString, type LogEntry, type LogLevel } from '@temporalio/worker';

export const LOG_FORMATS = ['text', 'json'] as const;
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export type LogLevelName = (typeof LOG_LEVELS)[number];

const sdkLevel = (level: LogLevelName) => level.toUpperCase() as LogLevel;

export interface LoggerOptions {
  format: LogFormat;
  level: LogLevelName;
  /** Applied to each whole line before it is written: the API key's redaction. */
  redact?: (line: string) => string;
  /** Where lines go; default: JSON to stdout (the event stream, nothing else is written there), text to stderr. */
  write?: (line: string) => void;
  /** Entries it returns true for are not written (ServerReachability.mutes: the core's repeats in an outage). */
  mute?: (entry: LogEntry) => boolean;
}

/**
 * The Runtime's logger: every log of the worker, of workflow and activity code (with the fields the SDK adds:
 * workflowId, runId, activityType...) and of the SDK core (forwarded, see coreLogFilter) goes through it.
 * The SDK's DefaultLogger filters the level and carries each entry's own timestamp; this module drops what holds a
 * secret (SECRET_FIELD, CORE_TASK_TOKEN) and formats.
 */
export function createLogger(options: LoggerOptions): DefaultLogger {
  const redact = options.redact ?? ((line: string) => line);
  const json = options.format === 'json';
  const write =
    options.write ??
    (json ? (line: string) => process.stdout.write(line) : (line: string) => process.stderr.write(line));
  const formatLine = json ? jsonLine : textLine(Boolean(process.stderr.isTTY) && options.write === undefined);
  return new DefaultLogger(sdkLevel(options.level), (entry) => {
    if (options.mute?.(entry)) return;
    const meta = withoutSecrets(entry.meta) as LogEntry['meta'];
    const line = redact(formatLine(meta === undefined ? entry : { ...entry, meta }));
    write(`${line.replaceAll(CORE_TASK_TOKEN, 'TaskToken(****)')}\n`);
  });
}

/**
 * Fields never written, at any depth: the SDK puts an activity's task token, with which anyone can complete or fail
 * the activity, in the fields of its activity lines ("Activity failed").
 */
const SECRET_FIELD = /token|secret|password|api_?key|authorization/i;
/** A task token as the core's debug lines print it inside their fields' text (`task_token: TaskToken(<base64>)`). */
const CORE_TASK_TOKEN = /TaskToken\([^)]*\)/g;

/** A copy of plain objects and arrays without SECRET_FIELD keys; other values (errors, class instances) as they are. */
function withoutSecrets(value: unknown, path: object[] = []): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (path.includes(value)) return '[Circular]';
  const inner = (v: unknown) => withoutSecrets(v, [...path, value]);
  if (Array.isArray(value)) return value.map(inner);
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !SECRET_FIELD.test(key))
      .map(([key, field]) => [key, inner(field)]),
  );
}

/**
 * The core's filter for a LOG_LEVEL. Info keeps the core at WARN: its INFO lines are per-poller chatter that
 * says nothing an operator acts on; debug opens it.
 */
export function coreLogFilter(level: LogLevelName): string {
  const core = level === 'info' ? 'WARN' : sdkLevel(level);
  return makeTelemetryFilterString({ core, other: level === 'debug' ? 'INFO' : 'ERROR' });
}

function entryTime(entry: LogEntry): string {
  return new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
}

/** One JSON object: time, level, message first, then the entry's fields (an Error as name, message, stack). */
export function jsonLine(entry: LogEntry): string {
  const head = { time: entryTime(entry), level: entry.level.toLowerCase(), message: entry.message };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry.meta ?? {}) as [string, unknown][]) {
    if (!(key in head)) fields[key] = value;
  }
  try {
    return JSON.stringify({ ...head, ...fields }, jsonValue);
  } catch {
    // A field JSON cannot hold (a cycle): the line keeps its head and says which fields were dropped.
    return JSON.stringify({ ...head, unserializableFields: Object.keys(fields) });
  }
}

function jsonValue(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) {
    const { name, message, stack } = value;
    const cause = value.cause instanceof Error ? { cause: value.cause } : {};
    return { ...(value as object), name, message, stack, ...cause };
  }
  return value;
}

/** The SDK's own text form: `<date> [LEVEL] message {fields}`. */
function textLine(colors: boolean): (entry: LogEntry) => string {
  const format = formatWithOptions.bind(undefined, { colors, breakLength: Infinity });
  return (entry) => {
    const head = `${entryTime(entry)} [${entry.level}] ${entry.message}`;
    return entry.meta === undefined ? head : `${head} ${format(entry.meta)}`;
  };
}

/**
 * The last word of a worker that could not start (often before its configuration, and so its logger, exists):
 * a JSON line on stdout when LOG_FORMAT asks for JSON, else the message alone on stderr. Messages of
 * configuration errors never hold a secret's value (src/config.ts).
 */
export function logStartFailure(error: unknown, env: NodeJS.ProcessEnv = process.env): void {
  const message = error instanceof Error ? error.message : String(error);
  if (env.LOG_FORMAT?.trim() === 'json') createLogger({ format: 'json', level: 'error' }).error(message);
  else process.stderr.write(`${message}\n`);
}
