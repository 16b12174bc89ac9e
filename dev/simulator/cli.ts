import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { ErrorBodies, JobOutcome } from './types';
import { API_KEY_PATTERN } from '../../src/docs-api/api-key';
import { MAX_PORT } from '../../src/contract/validation';
import { digitsInRange, errorBodiesSchema, jobOutcomeSchema, MAX_VISITOR_PATHS } from './schemas';

export const USAGE = `Usage: tsx dev/simulator/main.ts [options]

Simulator of the documentation service, on loopback unless --host says otherwise.

Options:
  --port <n>             port to listen on, 0 for any free one (default 4010)
  --host <address>       address to listen on (default 127.0.0.1)
  --paths <n>            analytics paths per project, 0..${MAX_VISITOR_PATHS} (default 120)
  --job-duration-ms <n>  how long a job stays active (default 2000)
  --outcome <outcome>    completed | completed-no-edits | failed | archived (default completed)
  --error-bodies <shape> service ({ "error": "<message>" }, as the real service; default) | detailed
                         ({ "error": { "code", "message", "field"? } })
  --print-key            print the generated key in full (when DOCS_API_KEY is not set)
  --help                 show this help

Environment:
  DOCS_API_KEY           the accepted admin key, <letters/digits>_<secret>; generated when absent

Visitors without dateFrom/dateTo cover the last 30 full UTC days (dateTo = today 00:00 UTC, exclusive).

Control routes (loopback clients only): POST /__sim/projects/:projectId, POST|GET|DELETE /__sim/faults,
DELETE /__sim/faults/:id, POST /__sim/jobs/:jobId/complete, GET /__sim/jobs/:jobId, GET /__sim/stats,
GET /__sim/requests[?since=<seq>], POST /__sim/reset, GET|POST /__sim/budgets (analytics per key, agent per
project: { requests, windowMs, retryAfter? }, null for off), POST /__sim/budgets/:name/spend.`;

export interface CliConfig {
  port: number;
  host: string;
  paths: number;
  jobDurationMs: number;
  outcome: JobOutcome;
  printKey: boolean;
  help: boolean;
  errorBodies: ErrorBodies;
  /** From DOCS_API_KEY; undefined: generate one. */
  apiKey?: string;
}

export type CliParse = { ok: true; config: CliConfig } | { ok: false; message: string };

const intFlag = (flag: string, min: number, max: number) => digitsInRange(`--${flag}`, min, max);

const flagsSchema = z.object({
  port: intFlag('port', 0, MAX_PORT),
  host: z.string().min(1, '--host must not be empty'),
  paths: intFlag('paths', 0, MAX_VISITOR_PATHS),
  'job-duration-ms': intFlag('job-duration-ms', 0, 86_400_000),
  outcome: z.enum(jobOutcomeSchema.options, {
    error: '--outcome must be completed, completed-no-edits, failed or archived',
  }),
  'print-key': z.boolean(),
  help: z.boolean(),
  'error-bodies': z.enum(errorBodiesSchema.options, { error: '--error-bodies must be service or detailed' }),
});

/** Flags and environment of the standalone simulator; a failure names the flag or variable at fault. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv): CliParse {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string', default: '4010' },
        host: { type: 'string', default: '127.0.0.1' },
        paths: { type: 'string', default: '120' },
        'job-duration-ms': { type: 'string', default: '2000' },
        outcome: { type: 'string', default: 'completed' },
        'print-key': { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
        'error-bodies': { type: 'string', default: 'service' },
      },
    }));
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  const parsed = flagsSchema.safeParse(values);
  if (!parsed.success) return { ok: false, message: parsed.error.issues[0]?.message ?? 'invalid flags' };
  const flags = parsed.data;
  const apiKey = env.DOCS_API_KEY === '' ? undefined : env.DOCS_API_KEY;
  if (apiKey !== undefined && !API_KEY_PATTERN.test(apiKey)) {
    return { ok: false, message: 'DOCS_API_KEY must have the form <letters/digits>_<secret>' };
  }
  return {
    ok: true,
    config: {
      port: flags.port,
      host: flags.host,
      paths: flags.paths,
      jobDurationMs: flags['job-duration-ms'],
      outcome: flags.outcome,
      printKey: flags['print-key'],
      help: flags.help,
      errorBodies: flags['error-bodies'],
      ...(apiKey !== undefined ? { apiKey } : {}),
    },
  };
}

/** `sim_****`: the prefix, never the secret. */
export function maskKey(apiKey: string): string {
  return `${apiKey.slice(0, apiKey.indexOf('_') + 1)}****`;
}
