import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startSimulator, type Simulator, type SimulatorStats } from '../dev/simulator';
import { freePort } from '../dev/ports';
import { startTemporal } from '../dev/temporal';
import type { RateBudget } from '../src/contract/budget';
import { campaignFaults, operatorFaults } from './fault-mix';
import { ForeignSpender } from './foreign-spender';
import { verifyOperators, type OperatorTally } from './operator-oracle';
import { planOperators } from './operator-plan';
import { operatorJobs, runOperators } from './operators';
import type { CampaignOptions } from './options';
import { sleep } from './retrying';
import { scanForKey, type SecretScan } from './secrets';
import { starter } from './starter-cli';
import { emptyVerdict, verifyExports, verifyJobs, type Verdict } from './verify';
import { WorkerSupervisor } from './worker-supervisor';
import { planExports, planJobs, runExports, runJobs } from './workload';

export interface CampaignReport {
  options: CampaignOptions;
  wallSeconds: number;
  jobs: number;
  followUpsSent: number;
  exports: number;
  workerKills: number;
  unexpectedWorkerExits: number;
  serverRestarts: number;
  /** Seconds after the first start of each worker kill and server restart. */
  workerKillsAt: number[];
  serverRestartsAt: number[];
  service: SimulatorStats;
  verdict: Verdict;
  secrets: SecretScan;
  /** With small budgets: the 429s the worker met and what the foreign spender took. */
  budgets?: BudgetFigures;
  /** The operator campaign's tally (options.operators). */
  operators?: OperatorTally;
}

export interface BudgetFigures {
  /** 429 answers in the simulator's log: all the worker's (the spender is not logged, no 429 is injected). */
  refusals: number;
  /** By budget: analytics (get-visitors) and agent (create, message). */
  refusalsByBudget: Record<'analytics' | 'agent', number>;
  /** The most of them in any 60 s. */
  maxRefusalsIn60s: number;
  /** Per minute since the first start. */
  refusalsByMinute: number[];
  foreignSpent: Record<'analytics' | 'agent', number>;
  foreignRefused: Record<'analytics' | 'agent', number>;
}

/**
 * One fault campaign on real parts: a dev server on SQLite (restarted mid-run), the production worker entry point
 * as a child process (killed with SIGKILL mid-run), and the simulator injecting faults into every route.
 */
export async function runCampaign(
  options: CampaignOptions,
  log: (line: string) => void = () => undefined,
): Promise<CampaignReport> {
  const run = crypto.randomBytes(3).toString('hex');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `chaos-${run}-`));
  const exportDir = path.join(dir, 'exports');
  await fs.mkdir(exportDir);
  const dbFilename = path.join(dir, 'temporal.db');
  const port = await freePort();
  const sim = await startSimulator({
    apiKey: `chaos_${crypto.randomBytes(16).toString('hex')}`,
    ...(options.budgets ? { budgets: options.budgets } : {}),
  });
  let server: TestWorkflowEnvironment = await startTemporal({ dbFilename, port });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const supervisor = new WorkerSupervisor({
    temporalAddress: server.address,
    service: sim,
    exportDir,
    ...(options.budgets
      ? {
          env: {
            DOCS_API_ANALYTICS_RATE_LIMIT: rateLimitText(options.budgets.analytics),
            DOCS_API_AGENT_RATE_LIMIT: rateLimitText(options.budgets.agent),
          },
        }
      : {}),
  });
  let spender: ForeignSpender | undefined;
  let serverRestarts = 0;
  try {
    await supervisor.start();
    const jobs = planJobs(options, run, sim);
    const exports = planExports(options, run, sim);
    const plan = options.operators && planOperators(options.operators);
    const operated = plan ? operatorJobs(plan, run, sim) : [];
    const faults = plan ? operatorFaults() : campaignFaults(options.hangs, { rateLimits: !options.budgets });
    for (const rule of faults) sim.faults.add(rule);
    if (options.budgets && options.foreignShare) {
      const projects = [...new Set(jobs.map((job) => job.projectId))];
      spender = new ForeignSpender(sim, options.budgets, options.foreignShare, projects);
      spender.start();
    }

    const startedAt = Date.now();
    const deadline = startedAt + options.deadlineSeconds * 1000;
    const since = () => `t+${((Date.now() - startedAt) / 1000).toFixed(0)}s`;
    const at = (seconds: number) => sleep(Math.max(0, startedAt + seconds * 1000 - Date.now()));
    const workerKillsAt = plan?.workerKillsAt ?? options.workerKillsAt;
    const serverRestartsAt = plan?.serverRestartsAt ?? options.serverRestartsAt;
    const events = [
      ...workerKillsAt.map((seconds) => ({ seconds, kind: 'kill' as const })),
      ...serverRestartsAt.map((seconds) => ({ seconds, kind: 'restart' as const })),
    ].sort((a, b) => a.seconds - b.seconds);
    const disruptions = (async () => {
      for (const event of events) {
        await at(event.seconds);
        if (event.kind === 'kill') {
          log(`t+${event.seconds}s: SIGKILL the worker`);
          await supervisor.kill();
        } else {
          log(`t+${event.seconds}s: restart the Temporal server`);
          await server.teardown();
          server = await startTemporal({ dbFilename, port });
          serverRestarts += 1;
        }
      }
    })();
    log(`${jobs.length} jobs, ${exports.length} exports`);
    if (plan)
      log(
        `operators: seed ${plan.seed}, plan ${plan.digest}, ${operated.length} jobs, ${plan.actions.length} actions`,
      );
    const [sent, , , records] = await Promise.all([
      runJobs(client, jobs, deadline),
      runExports(client, exports, deadline),
      disruptions,
      plan ? runOperators(client, () => server.address, plan, operated, startedAt, deadline) : [],
    ]);
    log(
      `${since()}: ${sent.length} follow-ups sent, ${records.length} operator actions; waiting for every workflow to close`,
    );

    const verdict = emptyVerdict();
    await verifyJobs(client, sim, { jobs, sent, killTimes: supervisor.killTimes }, deadline, verdict);
    await verifyExports(client, exports, deadline, verdict);
    const operators =
      plan &&
      (await verifyOperators(
        client,
        sim,
        { plan, jobs: operated, records, startedAt, killTimes: supervisor.killTimes },
        deadline,
        verdict.violations,
        log,
      ));
    log(`${since()}: verified`);
    const wallSeconds = (Date.now() - startedAt) / 1000;
    spender?.stop();
    const budgets = spender && budgetFigures(sim, startedAt, spender);
    if (
      budgets &&
      options.max429PerMinute !== undefined &&
      budgets.maxRefusalsIn60s > options.max429PerMinute
    ) {
      verdict.violations.push(
        `${budgets.maxRefusalsIn60s} x 429 in one minute (at most ${options.max429PerMinute} allowed)`,
      );
    }
    const failedJobs = [
      ...jobs.filter((job) => job.outcome === 'failed'),
      ...operated.filter((job) => job.planned.outcome === 'failed'),
    ];
    const cliOutputs = await Promise.all(
      [
        ['job', 'list', '--project', jobs[0]?.projectId ?? operated[0]?.projectId ?? 'none'],
        ...failedJobs.slice(0, 3).map((job) => ['job', 'status', '--workflow-id', job.workflowId]),
      ].map((args) => starter(server.address, args).then(({ stdout, stderr }) => stdout + stderr)),
    );
    const secrets = await scanForKey(
      sim.apiKey,
      {
        client,
        exportDir,
        workerLogs: supervisor.output(),
        cliOutputs,
        errorMessages: [
          ...verdict.failureMessages,
          ...sent.flatMap((s) => (s.updateOutcome ? [s.updateOutcome] : [])),
          ...records.flatMap((r) => (r.detail ? [r.detail] : [])),
        ],
      },
      deadline,
    );
    if (supervisor.startFailures.length > 0) {
      verdict.violations.push(`worker failed to start: ${supervisor.startFailures.join('; ')}`);
    }
    return {
      options,
      wallSeconds,
      jobs: jobs.length,
      followUpsSent: sent.length,
      exports: exports.length,
      workerKills: supervisor.killTimes.length,
      unexpectedWorkerExits: supervisor.unexpectedExits,
      serverRestarts,
      workerKillsAt,
      serverRestartsAt,
      service: sim.stats(),
      verdict,
      secrets,
      ...(budgets ? { budgets } : {}),
      ...(operators ? { operators } : {}),
    };
  } finally {
    spender?.stop();
    await supervisor.stop();
    await connection.close();
    await server.teardown();
    await sim.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** A budget as DOCS_API_*_RATE_LIMIT spells it, e.g. 20/10000ms. */
function rateLimitText(budget: RateBudget): string {
  return `${budget.requests}/${budget.windowMs}ms`;
}

function budgetFigures(sim: Simulator, startedAt: number, spender: ForeignSpender): BudgetFigures {
  const refused = sim.requests().filter((entry) => entry.status === 429);
  const times = refused.map((entry) => entry.at).sort((a, b) => a - b);
  const analytics = refused.filter((entry) => entry.route === 'getVisitors').length;
  let maxRefusalsIn60s = 0;
  for (let first = 0, last = 0; last < times.length; last += 1) {
    while ((times[last] ?? 0) - (times[first] ?? 0) >= 60_000) first += 1;
    maxRefusalsIn60s = Math.max(maxRefusalsIn60s, last - first + 1);
  }
  const refusalsByMinute: number[] = [];
  for (const at of times) {
    const minute = Math.max(0, Math.floor((at - startedAt) / 60_000));
    while (refusalsByMinute.length <= minute) refusalsByMinute.push(0);
    refusalsByMinute[minute] = (refusalsByMinute[minute] ?? 0) + 1;
  }
  return {
    refusals: times.length,
    refusalsByBudget: { analytics, agent: times.length - analytics },
    maxRefusalsIn60s,
    refusalsByMinute,
    foreignSpent: { ...spender.spent },
    foreignRefused: { ...spender.refused },
  };
}
