import type { AnalyticsDataSet } from './analytics';
import { ORGANIZATION, type Budgets } from './budgets';
import type { Counters } from './counters';
import { errorReply, invalid, notFound, tooManyRequests, type ParsedBody, type Reply } from './http';
import type { JobStore } from './jobs';
import type { Projects } from './projects';
import { firstIssue, promptBodySchema } from './schemas';
import type { BudgetName, RequestLogEntry, RouteName } from './types';
import { parseVisitorsQuery } from './visitors-query';

export interface ServiceDeps {
  jobs: JobStore;
  analytics: AnalyticsDataSet;
  budgets: Budgets;
  counters: Counters;
  projects: Projects;
  clock: () => number;
}

export interface ServiceRequest {
  route: RouteName;
  projectId: string;
  jobId?: string;
  body: ParsedBody;
  query: URLSearchParams;
  /** Completed in place: jobId of a created job, processed. */
  entry: RequestLogEntry;
}

/** The four operations of the service, for an authenticated request that no fault stopped. */
export function handleService(deps: ServiceDeps, req: ServiceRequest): Reply {
  switch (req.route) {
    case 'createJob':
      return createJob(deps, req);
    case 'getJob':
      return getJob(deps, req);
    case 'sendMessage':
      return sendMessage(deps, req);
    case 'getVisitors':
      return getVisitors(deps, req);
  }
}

function createJob(deps: ServiceDeps, req: ServiceRequest): Reply {
  const limited = budgetRefusal(deps, 'agent', req.projectId);
  if (limited) return limited;
  const prompt = promptOf(req.body);
  if (typeof prompt !== 'string') return prompt;
  const job = deps.jobs.create(req.projectId, prompt, deps.projects.behaviour(req.projectId));
  req.entry.jobId = job.id;
  req.entry.processed = true;
  deps.counters.jobCreated(req.projectId);
  return { status: 201, body: deps.jobs.body(job) };
}

function getJob(deps: ServiceDeps, req: ServiceRequest): Reply {
  const job = deps.jobs.find(req.projectId, req.jobId ?? '');
  if (!job) return jobNotFound(req);
  req.entry.processed = true;
  return { status: 200, body: deps.jobs.body(job) };
}

function sendMessage(deps: ServiceDeps, req: ServiceRequest): Reply {
  const limited = budgetRefusal(deps, 'agent', req.projectId);
  if (limited) return limited;
  const prompt = promptOf(req.body);
  if (typeof prompt !== 'string') return prompt;
  const job = deps.jobs.find(req.projectId, req.jobId ?? '');
  if (!job) return jobNotFound(req);
  const { status } = deps.jobs.state(job);
  if (status === 'failed' || status === 'archived') {
    return errorReply(409, `job ${job.id} is ${status} and takes no more messages`);
  }
  deps.jobs.addMessage(job, prompt);
  req.entry.processed = true;
  deps.counters.messageAccepted();
  return { status: 200, body: deps.jobs.body(job) };
}

function getVisitors(deps: ServiceDeps, req: ServiceRequest): Reply {
  const overBudget = budgetRefusal(deps, 'analytics', ORGANIZATION);
  if (overBudget) return overBudget;
  const parsed = parseVisitorsQuery(req.query, deps.clock());
  if (!parsed.ok) return invalid(parsed.field, parsed.message);
  const { limit, offset, fromMs, toMs } = parsed.query;
  const range = deps.analytics.range(req.projectId, deps.projects.visitorPaths(req.projectId), fromMs, toMs);
  const from = deps.projects.removedRows(req.projectId) + offset;
  req.entry.processed = true;
  return {
    status: 200,
    body: {
      totals: range.totals,
      visitors: range.rows.slice(from, from + limit),
      hasMore: from + limit < range.rows.length,
    },
  };
}

function budgetRefusal(deps: ServiceDeps, name: BudgetName, key: string): Reply | undefined {
  const admitted = deps.budgets.admit(name, key);
  if (admitted.ok) return undefined;
  deps.counters.budgetRefused(name);
  const seconds = admitted.retryAfterSeconds;
  return tooManyRequests(seconds === undefined ? undefined : String(seconds));
}

function promptOf(body: ParsedBody): string | Reply {
  if (body.kind === 'not-json') return invalid('body', 'the request body is not valid JSON');
  const parsed = promptBodySchema.safeParse(body.kind === 'json' ? body.value : undefined);
  if (parsed.success) return parsed.data.prompt;
  const { message } = firstIssue(parsed.error, 'prompt');
  return invalid('prompt', message);
}

function jobNotFound(req: ServiceRequest): Reply {
  return notFound(`no job ${req.jobId ?? ''} in project ${req.projectId}`);
}
