import { setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AnalyticsDataSet } from './analytics';
import { parseVisitorsQuery } from './visitors-query';
import { Budgets, ORGANIZATION } from './budgets';
import { Counters } from './counters';
import { FaultRules } from './faults';
import { encode, errorReply, write } from './http';
import { JobStore } from './jobs';
import { resolveOptions } from './options';
import { parseBudgetChanges } from './schemas';
import { handleRequest, type PipelineDeps } from './pipeline';
import { Projects } from './projects';
import { RequestLog } from './request-log';
import type { Simulator, SimulatorOptions } from './types';

/** Starts the simulator of the documentation service (loopback, ephemeral port by default). */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const o = resolveOptions(options);
  const jobs = new JobStore(o.clock);
  const analytics = new AnalyticsDataSet(o.seed);
  const faults = new FaultRules();
  const budgets = new Budgets(o.budgets, o.clock);
  const log = new RequestLog(o.maxLogEntries);
  const counters = new Counters();
  const projects = new Projects({ jobs: o.jobs, visitorPaths: o.visitorPaths, errorBodies: o.errorBodies });
  const lifetime = new AbortController();
  // Every request held by an injected latency listens to it: as many as the clients send at once.
  setMaxListeners(0, lifetime.signal);
  let requestIds = 0;

  const reset = (): void => {
    jobs.clear();
    faults.clear();
    budgets.clear();
    log.clear();
    counters.clear();
    projects.clear();
  };

  const deps: PipelineDeps = {
    apiKey: o.apiKey,
    clock: o.clock,
    jobs,
    analytics,
    budgets,
    counters,
    projects,
    faults,
    log,
    signal: lifetime.signal,
    nextRequestId: () => `req_${++requestIds}`,
    errorBodies: o.errorBodies,
    control: {
      configureProject: (projectId, cfg) => projects.configure(projectId, cfg),
      faults,
      completeJob: (jobId, outcome) => jobs.complete(jobId, outcome),
      stats: () => counters.snapshot(),
      requests: (afterSeq) => log.entries(afterSeq),
      job: (jobId) => jobs.snapshot(jobId),
      budgets,
      reset,
    },
  };

  const server = createServer((req, res) => {
    handleRequest(deps, req, res).catch((error: unknown) => {
      // After close() the cut-short latency lands here; the socket is gone already.
      if (lifetime.signal.aborted) return;
      const message = error instanceof Error ? error.message : 'unexpected error';
      write(res, encode(errorReply(500, `simulator error: ${message}`)), `req_${++requestIds}`, o.clock());
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost(address)}:${address.port}`,
    apiKey: o.apiKey,
    faults,
    configureProject(projectId, cfg) {
      projects.configure(projectId, cfg);
    },
    completeJob(jobId, outcome) {
      if (!jobs.complete(jobId, outcome)) throw new Error(`the simulator has no job ${jobId}`);
    },
    configureBudgets(changes) {
      budgets.configure(parseBudgetChanges(changes));
    },
    warmVisitors(projectId, dateFrom, dateTo) {
      const parsed = parseVisitorsQuery(new URLSearchParams({ dateFrom, dateTo }), o.clock());
      if (!parsed.ok) throw new TypeError(`${parsed.field}: ${parsed.message}`);
      analytics.range(projectId, projects.visitorPaths(projectId), parsed.query.fromMs, parsed.query.toMs);
    },
    spendBudget: (name, requests, projectId) =>
      budgets.spend(name, name === 'analytics' ? ORGANIZATION : (projectId ?? ''), requests),
    stats: () => counters.snapshot(),
    requests: () => log.entries(),
    job: (jobId) => jobs.snapshot(jobId),
    reset,
    close() {
      closing ??= new Promise<void>((resolve) => {
        lifetime.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** The address clients use: a wildcard listen is reached over loopback. */
function urlHost(address: AddressInfo): string {
  if (address.address === '0.0.0.0') return '127.0.0.1';
  if (address.address === '::') return '[::1]';
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}
