import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startSimulator, type SimulatorStats } from '../dev/simulator';
import { freePort } from '../dev/ports';
import { startTemporal } from '../dev/temporal';
import { campaignFaults } from './fault-mix';
import type { CampaignOptions } from './options';
import { sleep } from './retrying';
import { scanForKey, type SecretScan } from './secrets';
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
  service: SimulatorStats;
  verdict: Verdict;
  secrets: SecretScan;
}

const STARTER = path.resolve(__dirname, '../src/starter.ts');

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
  const dbFilename = path.join(dir, 'temporal.db');
  const port = await freePort();
  const sim = await startSimulator({ apiKey: `chaos_${crypto.randomBytes(16).toString('hex')}` });
  let server: TestWorkflowEnvironment = await startTemporal({ dbFilename, port });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const supervisor = new WorkerSupervisor({ temporalAddress: server.address, service: sim, exportDir });
  let serverRestarts = 0;
  try {
    await supervisor.start();
    const jobs = planJobs(options, run, sim);
    const exports = planExports(options, run, sim);
    for (const rule of campaignFaults(options.hangs)) sim.faults.add(rule);

    const startedAt = Date.now();
    const deadline = startedAt + options.deadlineSeconds * 1000;
    const at = (seconds: number) => sleep(Math.max(0, startedAt + seconds * 1000 - Date.now()));
    const events = [
      ...options.workerKillsAt.map((seconds) => ({ seconds, kind: 'kill' as const })),
      { seconds: options.serverRestartAt, kind: 'restart' as const },
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
    const [sent] = await Promise.all([
      runJobs(client, jobs, deadline),
      runExports(client, exports, deadline),
      disruptions,
    ]);
    log(`${sent.length} follow-ups sent; waiting for every workflow to close`);

    const verdict = emptyVerdict();
    await verifyJobs(client, sim, { jobs, sent, killTimes: supervisor.killTimes }, deadline, verdict);
    await verifyExports(client, exports, deadline, verdict);
    const wallSeconds = (Date.now() - startedAt) / 1000;
    const cliOutputs = await Promise.all([
      starter(server.address, ['job', 'list', '--project', jobs[0]?.projectId ?? 'none']),
      ...jobs
        .filter((job) => job.outcome === 'failed')
        .slice(0, 3)
        .map((job) => starter(server.address, ['job', 'status', '--workflow-id', job.workflowId])),
    ]);
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
      service: sim.stats(),
      verdict,
      secrets,
    };
  } finally {
    await supervisor.stop();
    await connection.close();
    await server.teardown();
    await sim.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function starter(address: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, ...args],
      { env: { PATH: process.env.PATH ?? '', TEMPORAL_ADDRESS: address } },
      (_error, stdout, stderr) => resolve(stdout + stderr),
    );
  });
}
