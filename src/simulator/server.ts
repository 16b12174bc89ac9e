import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { AnalyticsDataSet } from './analytics';
import { FaultController, faultRuleSchema } from './faults';
import { JobStore } from './jobs';
import type {
  FaultRule,
  JobBehaviour,
  ProjectConfig,
  RequestLogEntry,
  RouteName,
  SimJobSnapshot,
  SimulatorOptions,
  SimulatorStats,
} from './types';

export interface Simulator {
  readonly url: string;
  readonly apiKey: string;
  configureProject(projectId: string, cfg: ProjectConfig): void;
  readonly faults: FaultController;
  completeJob(jobId: string, outcome?: JobBehaviour['outcome']): void;
  stats(): SimulatorStats;
  requests(): readonly RequestLogEntry[];
  job(jobId: string): SimJobSnapshot | undefined;
  reset(): void;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const HOUR_MS = 3_600_000;
const DEFAULT_PATHS = 120;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

const promptBody = z.object({ prompt: z.string().min(1, 'prompt must be a string of at least 1 character') });
const projectConfigSchema = z
  .object({
    jobs: z
      .object({
        durationMs: z.number().int().min(0).optional(),
        outcome: z.enum(['completed', 'completed-no-edits', 'failed', 'archived']).optional(),
        archiveAfterMs: z.number().int().min(0).optional(),
      })
      .strict()
      .optional(),
    visitorPaths: z.number().int().min(0).optional(),
  })
  .strict();

/** Starts the simulator of the documentation service on loopback (port 0 by default). */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const clock = options.clock ?? Date.now;
  const apiKey = options.apiKey ?? `sim_${randomBytes(16).toString('hex')}`;
  const defaults: JobBehaviour = {
    durationMs: 2000,
    outcome: 'completed',
    archiveAfterMs: 0,
    ...options.jobs,
  };
  const limits = {
    createJob: options.rateLimit?.createPerHour ?? 100,
    sendMessage: options.rateLimit?.messagePerHour ?? 100,
  };
  const maxLog = options.maxLogEntries ?? 200_000;
  const analytics = new AnalyticsDataSet(options.analytics?.seed ?? 'docs-sim');
  const jobs = new JobStore(clock);
  const faults = new FaultController();
  let projects = new Map<string, ProjectConfig>();
  let rateWindows = new Map<string, number[]>();
  let log: RequestLogEntry[] = [];
  let seq = 0;
  let requestIds = 0;
  let stats = emptyStats();

  const behaviourFor = (projectId: string): JobBehaviour => ({
    ...defaults,
    ...projects.get(projectId)?.jobs,
  });

  function rateLimited(route: 'createJob' | 'sendMessage', projectId: string): number | undefined {
    const key = `${route}|${projectId}`;
    const now = clock();
    const window = (rateWindows.get(key) ?? []).filter((at) => at > now - HOUR_MS);
    rateWindows.set(key, window);
    if (window.length >= limits[route])
      return Math.max(1, Math.ceil(((window[0] ?? now) + HOUR_MS - now) / 1000));
    window.push(now);
    return undefined;
  }

  function handleService(
    route: RouteName,
    params: Record<string, string>,
    url: URL,
    body: unknown,
    entry: RequestLogEntry,
  ): Reply {
    const projectId = params.projectId ?? '';
    switch (route) {
      case 'createJob': {
        const parsed = promptBody.safeParse(body);
        if (!parsed.success) return invalid('prompt', 'prompt is required: a string of at least 1 character');
        entry.prompt = parsed.data.prompt;
        const retryAfter = rateLimited('createJob', projectId);
        if (retryAfter !== undefined) return tooMany(retryAfter);
        const job = jobs.create(projectId, parsed.data.prompt, behaviourFor(projectId));
        entry.jobId = job.id;
        entry.processed = true;
        stats.jobsCreated += 1;
        stats.jobsCreatedByProject[projectId] = (stats.jobsCreatedByProject[projectId] ?? 0) + 1;
        return { status: 201, body: jobs.view(job) };
      }
      case 'getJob': {
        const job = jobs.find(projectId, params.jobId ?? '');
        if (!job) return notFound('job');
        entry.processed = true;
        return { status: 200, body: jobs.view(job) };
      }
      case 'sendMessage': {
        const job = jobs.find(projectId, params.jobId ?? '');
        if (!job) return notFound('job');
        const parsed = promptBody.safeParse(body);
        if (!parsed.success) return invalid('prompt', 'prompt is required: a string of at least 1 character');
        entry.prompt = parsed.data.prompt;
        const { status } = jobs.status(job);
        if (status === 'failed' || status === 'archived') {
          return {
            status: 409,
            body: { error: { code: 'conflict', message: `job is ${status} and takes no messages` } },
          };
        }
        const retryAfter = rateLimited('sendMessage', projectId);
        if (retryAfter !== undefined) return tooMany(retryAfter);
        jobs.addMessage(job, parsed.data.prompt);
        entry.processed = true;
        stats.messagesAccepted += 1;
        return { status: 200, body: jobs.view(job) };
      }
      case 'getVisitors':
        return visitors(projectId, url, entry);
    }
  }

  function visitors(projectId: string, url: URL, entry: RequestLogEntry): Reply {
    const q = url.searchParams;
    const limit = q.has('limit') ? Number(q.get('limit')) : 50;
    const offset = q.has('offset') ? Number(q.get('offset')) : 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > 250)
      return invalid('limit', 'limit must be an integer from 1 to 250');
    if (!Number.isInteger(offset) || offset < 0) return invalid('offset', 'offset must be an integer >= 0');
    const now = clock();
    const to = q.has('dateTo') ? parseDate(q.get('dateTo') ?? '') : Math.floor(now / 86_400_000) * 86_400_000;
    const from = q.has('dateFrom') ? parseDate(q.get('dateFrom') ?? '') : (to ?? now) - 30 * 86_400_000;
    if (from === undefined) return invalid('dateFrom', 'dateFrom must be ISO 8601 or YYYY-MM-DD');
    if (to === undefined) return invalid('dateTo', 'dateTo must be ISO 8601 or YYYY-MM-DD');
    if (from >= to) return invalid('dateTo', 'dateTo must be after dateFrom');
    const paths = projects.get(projectId)?.visitorPaths ?? options.analytics?.paths ?? DEFAULT_PATHS;
    const range = analytics.range(projectId, paths, from, to);
    entry.processed = true;
    return {
      status: 200,
      body: {
        totals: range.totals,
        visitors: range.rows.slice(offset, offset + limit),
        hasMore: offset + limit < range.rows.length,
      },
    };
  }

  function control(method: string, pathname: string, body: unknown): Reply {
    const parts = pathname.split('/').filter(Boolean).slice(1).map(decodeURIComponent);
    const [resource, id, action] = parts;
    if (method === 'GET' && resource === 'stats') return { status: 200, body: stats };
    if (method === 'GET' && resource === 'requests') return { status: 200, body: log };
    if (method === 'POST' && resource === 'reset') return (simulator.reset(), { status: 204 });
    if (method === 'POST' && resource === 'faults') {
      const parsed = faultRuleSchema.safeParse(body);
      if (!parsed.success) return controlInvalid(parsed.error);
      return { status: 201, body: { id: faults.add(parsed.data as FaultRule) } };
    }
    if (method === 'DELETE' && resource === 'faults') return (faults.clear(), { status: 204 });
    if (method === 'GET' && resource === 'faults') return { status: 200, body: faults.list() };
    if (method === 'POST' && resource === 'projects' && id) {
      const parsed = projectConfigSchema.safeParse(body);
      if (!parsed.success) return controlInvalid(parsed.error);
      simulator.configureProject(id, parsed.data as ProjectConfig);
      return { status: 204 };
    }
    if (resource === 'jobs' && id) {
      if (method === 'GET' && !action) {
        const snapshot = jobs.snapshot(id);
        return snapshot ? { status: 200, body: snapshot } : notFound('job');
      }
      if (method === 'POST' && action === 'complete') {
        const parsed = z
          .object({ outcome: z.enum(['completed', 'completed-no-edits', 'failed', 'archived']).optional() })
          .safeParse(body ?? {});
        if (!parsed.success) return controlInvalid(parsed.error);
        if (!jobs.get(id)) return notFound('job');
        jobs.complete(id, parsed.data.outcome);
        return { status: 204 };
      }
    }
    return notFound('control route');
  }

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        send(res, { status: 500, body: { error: { code: 'internal', message: String(error) } } });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const entry: RequestLogEntry = {
      seq: ++seq,
      at: clock(),
      route: 'unknown',
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: 0,
      processed: false,
      authOk: false,
    };
    const record = (status: RequestLogEntry['status']): void => {
      entry.status = status;
      stats.responsesByStatus[String(status)] = (stats.responsesByStatus[String(status)] ?? 0) + 1;
      log.push(entry);
      if (log.length > maxLog) log = log.slice(log.length - maxLog);
    };

    if (url.pathname.startsWith('/__sim/')) {
      entry.route = 'control';
      const reply = control(method, url.pathname, parseJson(raw));
      return send(res, reply);
    }

    const match = matchRoute(method, url.pathname);
    if (!match) {
      record(404);
      return send(res, notFound('route'));
    }
    if ('methodNotAllowed' in match) {
      record(405);
      return send(res, {
        status: 405,
        body: { error: { code: 'method_not_allowed', message: `${method} not allowed` } },
      });
    }
    const { route, params } = match;
    entry.route = route;
    stats.requests[route] += 1;
    if (params.projectId !== undefined) entry.projectId = params.projectId;
    if (params.jobId !== undefined) entry.jobId = params.jobId;

    entry.authOk = req.headers.authorization === `Bearer ${apiKey}`;
    if (!entry.authOk) {
      record(401);
      return send(res, {
        status: 401,
        body: { error: { code: 'unauthorized', message: 'missing or invalid API key' } },
      });
    }

    const requestBody = raw.length > 0 ? parseJson(raw) : undefined;
    const loggedPrompt = (requestBody as { prompt?: unknown } | undefined)?.prompt;
    if (typeof loggedPrompt === 'string') entry.prompt = loggedPrompt;

    const fault = faults.take(route, params.projectId);
    if (fault) entry.fault = fault.kind;
    if (fault?.kind === 'latency') await delay(fault.latencyMs ?? 0);
    if (fault?.kind === 'rateLimit') {
      record(429);
      return send(res, tooMany(retryAfterValue(fault, clock())));
    }
    const disruptive = fault && ['status', 'reset', 'hang'].includes(fault.kind) ? fault : undefined;
    if (disruptive && !disruptive.afterProcessing) return disrupt(disruptive, res, record);

    const body = requestBody;
    if (raw.length > 0 && body === undefined) {
      record(400);
      return send(res, invalid('body', 'request body must be JSON'));
    }
    const reply = handleService(route, params, url, body, entry);
    if (disruptive) return disrupt(disruptive, res, record);

    if (fault && reply.status < 300 && (fault.kind === 'malformed' || fault.kind === 'drift')) {
      record(reply.status);
      return sendFaulty(res, reply, fault);
    }
    record(reply.status);
    send(res, reply);
  }

  function disrupt(
    fault: FaultRule,
    res: ServerResponse,
    record: (s: RequestLogEntry['status']) => void,
  ): void {
    if (fault.kind === 'reset') {
      record('reset');
      res.socket?.destroy();
      return;
    }
    if (fault.kind === 'hang') {
      record('hang');
      return;
    }
    const status = fault.status ?? 500;
    record(status);
    const headers: Record<string, string> = {};
    if (fault.retryAfter) headers['retry-after'] = retryAfterValue(fault, clock());
    send(res, { status, headers, body: { error: { code: 'injected', message: `injected HTTP ${status}` } } });
  }

  function send(res: ServerResponse, reply: Reply): void {
    res.setHeader('x-request-id', `req_${++requestIds}`);
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    if (reply.body === undefined) {
      res.writeHead(reply.status).end();
      return;
    }
    res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
  }

  function sendFaulty(res: ServerResponse, reply: Reply, fault: FaultRule): void {
    res.setHeader('x-request-id', `req_${++requestIds}`);
    const json = JSON.stringify(reply.body);
    if (fault.kind === 'malformed') {
      switch (fault.malformed ?? 'not-json') {
        case 'not-json':
          return void res
            .writeHead(reply.status, { 'content-type': 'application/json' })
            .end('this is not json');
        case 'html-200':
          return void res
            .writeHead(200, { 'content-type': 'text/html' })
            .end('<html><body><h1>Bad gateway</h1></body></html>');
        case 'no-content-type':
          return void res.writeHead(reply.status).end(json);
        case 'truncated-json':
          return void res
            .writeHead(reply.status, { 'content-type': 'application/json' })
            .end(json.slice(0, Math.max(1, Math.floor(json.length / 2))));
      }
    }
    const body = { ...(reply.body as Record<string, unknown>) };
    switch (fault.drift ?? 'extra-fields') {
      case 'unknown-status':
        if ('status' in body) body.status = 'paused_for_review';
        break;
      case 'missing-id':
        delete body.id;
        delete body.totals;
        break;
      case 'extra-fields':
        Object.assign(body, { futureField: { nested: true }, tokensUsed: 1234 });
        break;
      case 'wrong-types':
        if ('status' in body) body.status = 42;
        else body.hasMore = 'yes';
        break;
      case 'archivedAt-omitted':
        delete body.archivedAt;
        break;
    }
    res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  const simulator: Simulator = {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`,
    apiKey,
    faults,
    configureProject(projectId, cfg) {
      const current = projects.get(projectId) ?? {};
      projects.set(projectId, { ...current, ...cfg, jobs: { ...current.jobs, ...cfg.jobs } });
    },
    completeJob: (jobId, outcome) => jobs.complete(jobId, outcome),
    stats: () => structuredClone(stats),
    requests: () => log,
    job: (jobId) => jobs.snapshot(jobId),
    reset() {
      jobs.clear();
      faults.clear();
      projects = new Map();
      rateWindows = new Map();
      log = [];
      stats = emptyStats();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return simulator;
}

function emptyStats(): SimulatorStats {
  return {
    requests: { createJob: 0, getJob: 0, sendMessage: 0, getVisitors: 0 },
    jobsCreated: 0,
    jobsCreatedByProject: {},
    messagesAccepted: 0,
    responsesByStatus: {},
  };
}

type RouteMatch = { route: RouteName; params: Record<string, string> } | { methodNotAllowed: true };

function matchRoute(method: string, pathname: string): RouteMatch | undefined {
  const segments = pathname.split('/').slice(1);
  const decoded = segments.map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  const [v, area, projectId, kind, jobId, tail] = decoded;
  const candidates: [string, RouteName, number, Record<string, string>][] = [];
  if (v === 'v2' && area === 'agent' && projectId && kind === 'job') {
    if (segments.length === 4) candidates.push(['POST', 'createJob', 4, { projectId }]);
    if (segments.length === 5 && jobId) candidates.push(['GET', 'getJob', 5, { projectId, jobId }]);
    if (segments.length === 6 && jobId && tail === 'message')
      candidates.push(['POST', 'sendMessage', 6, { projectId, jobId }]);
  }
  if (v === 'v1' && area === 'analytics' && projectId && kind === 'visitors' && segments.length === 4) {
    candidates.push(['GET', 'getVisitors', 4, { projectId }]);
  }
  if (candidates.length === 0) return undefined;
  const hit = candidates.find(([m]) => m === method);
  return hit ? { route: hit[1], params: hit[3] } : { methodNotAllowed: true };
}

function parseDate(value: string): number | undefined {
  if (!DATE_ONLY.test(value) && !DATE_TIME.test(value)) return undefined;
  const ms = Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
  return Number.isNaN(ms) ? undefined : ms;
}

function retryAfterValue(fault: FaultRule, now: number): string {
  const spec = fault.retryAfter ?? { seconds: 1 };
  if ('seconds' in spec) return String(spec.seconds);
  return new Date(now + spec.httpDateInSeconds * 1000).toUTCString();
}

function invalid(field: string, message: string): Reply {
  return { status: 400, body: { error: { code: 'invalid_request', message, field } } };
}

function controlInvalid(error: z.ZodError): Reply {
  const issue = error.issues[0];
  return invalid(issue?.path.join('.') || 'body', issue?.message ?? 'invalid');
}

function notFound(what: string): Reply {
  return { status: 404, body: { error: { code: 'not_found', message: `${what} not found` } } };
}

function tooMany(retryAfter: number | string): Reply {
  return {
    status: 429,
    headers: { 'retry-after': String(retryAfter) },
    body: { error: { code: 'rate_limited', message: 'rate limit exceeded' } },
  };
}

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
