import type { z } from 'zod';
import { ORGANIZATION, type Budgets } from './budgets';
import type { FaultRules } from './faults';
import { invalid, methodNotAllowed, notFound, type ParsedBody, type Reply } from './http';
import type { ProjectView } from './projects';
import { matchPattern, splitPath } from './routes';
import {
  budgetChangesSchema,
  budgetSpendSchema,
  completeJobSchema,
  faultRuleSchema,
  firstIssue,
  projectConfigSchema,
} from './schemas';
import type { JobOutcome, ProjectConfig, RequestLogEntry, SimJobSnapshot, SimulatorStats } from './types';

export const CONTROL_PREFIX = '/__sim';

export interface ControlDeps {
  configureProject(projectId: string, cfg: ProjectConfig): ProjectView;
  faults: FaultRules;
  /** False for an unknown job. */
  completeJob(jobId: string, outcome?: JobOutcome): boolean;
  stats(): SimulatorStats;
  requests(afterSeq: number): RequestLogEntry[];
  job(jobId: string): SimJobSnapshot | undefined;
  budgets: Budgets;
  reset(): void;
}

type Handler = (
  deps: ControlDeps,
  params: Record<string, string>,
  body: ParsedBody,
  query: URLSearchParams,
) => Reply;

const CONTROL_ROUTES: { method: string; pattern: string[]; handle: Handler }[] = [
  {
    method: 'POST',
    pattern: ['__sim', 'projects', ':projectId'],
    handle: (deps, { projectId = '' }, body) =>
      withBody(body, projectConfigSchema, (cfg) => ({
        status: 200,
        body: deps.configureProject(projectId, cfg),
      })),
  },
  {
    method: 'POST',
    pattern: ['__sim', 'faults'],
    handle: (deps, _params, body) =>
      withBody(body, faultRuleSchema, (rule) => ({
        status: 201,
        body: { id: deps.faults.add(rule) },
      })),
  },
  {
    method: 'GET',
    pattern: ['__sim', 'faults'],
    handle: (deps) => ({ status: 200, body: deps.faults.entries() }),
  },
  {
    method: 'DELETE',
    pattern: ['__sim', 'faults'],
    handle: (deps) => (deps.faults.clear(), { status: 204 }),
  },
  {
    method: 'DELETE',
    pattern: ['__sim', 'faults', ':faultId'],
    handle: (deps, { faultId = '' }) => {
      if (!deps.faults.has(faultId)) return notFound(`no fault ${faultId}`);
      deps.faults.remove(faultId);
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    pattern: ['__sim', 'jobs', ':jobId', 'complete'],
    handle: (deps, { jobId = '' }, body) =>
      withBody(body, completeJobSchema, ({ outcome }) => {
        if (!deps.completeJob(jobId, outcome)) return notFound(`no job ${jobId}`);
        return { status: 200, body: deps.job(jobId) };
      }),
  },
  {
    method: 'GET',
    pattern: ['__sim', 'jobs', ':jobId'],
    handle: (deps, { jobId = '' }) => {
      const job = deps.job(jobId);
      return job ? { status: 200, body: job } : notFound(`no job ${jobId}`);
    },
  },
  {
    method: 'GET',
    pattern: ['__sim', 'budgets'],
    handle: (deps) => ({ status: 200, body: deps.budgets.config }),
  },
  {
    method: 'POST',
    pattern: ['__sim', 'budgets'],
    handle: (deps, _params, body) =>
      withBody(body, budgetChangesSchema, (changes) => ({
        status: 200,
        body: deps.budgets.configure(changes),
      })),
  },
  {
    method: 'POST',
    pattern: ['__sim', 'budgets', ':name', 'spend'],
    handle: (deps, { name = '' }, body) => {
      if (name !== 'analytics' && name !== 'agent') return notFound(`no budget ${name}`);
      return withBody(body, budgetSpendSchema, ({ requests, projectId }) => {
        if (name === 'agent' && projectId === undefined)
          return invalid('projectId', 'projectId is required for the agent budget');
        const key = name === 'analytics' ? ORGANIZATION : (projectId ?? '');
        return { status: 200, body: { spent: deps.budgets.spend(name, key, requests) } };
      });
    },
  },
  {
    method: 'GET',
    pattern: ['__sim', 'stats'],
    handle: (deps) => ({ status: 200, body: deps.stats() }),
  },
  {
    method: 'GET',
    pattern: ['__sim', 'requests'],
    handle: (deps, _params, _body, query) => {
      const since = query.get('since') ?? '0';
      if (!/^\d{1,15}$/.test(since)) return invalid('since', 'since must be a sequence number >= 0');
      return { status: 200, body: deps.requests(Number(since)) };
    },
  },
  {
    method: 'POST',
    pattern: ['__sim', 'reset'],
    handle: (deps) => (deps.reset(), { status: 204 }),
  },
];

export function isControlPath(pathname: string): boolean {
  return pathname === CONTROL_PREFIX || pathname.startsWith(`${CONTROL_PREFIX}/`);
}

/**
 * Steering of a simulator in another process (dev, benchmarks, chaos runs, CLI tests). Bodies are validated
 * like the in-process API; GET /__sim/faults and DELETE /__sim/faults/:id go beyond it, and
 * GET /__sim/requests?since=<seq> returns only newer entries.
 */
export function handleControl(deps: ControlDeps, method: string, url: URL, body: ParsedBody): Reply {
  const segments = splitPath(url.pathname);
  if (!segments) return notFound(`no control route ${url.pathname}`);
  const hits = CONTROL_ROUTES.flatMap((route) => {
    const params = matchPattern(route.pattern, segments);
    return params ? [{ route, params }] : [];
  });
  const hit = hits.find((h) => h.route.method === method);
  if (hit) return hit.route.handle(deps, hit.params, body, url.searchParams);
  if (hits.length > 0)
    return methodNotAllowed(
      method,
      hits.map((h) => h.route.method),
    );
  return notFound(`no control route ${method} ${url.pathname}`);
}

function withBody<T>(body: ParsedBody, schema: z.ZodType<T>, then: (value: T) => Reply): Reply {
  if (body.kind === 'not-json') return invalid('body', 'the request body is not valid JSON');
  const parsed = schema.safeParse(body.kind === 'json' ? body.value : {});
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error, 'body');
    return invalid(field, message);
  }
  return then(parsed.data);
}
