import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTemporal } from '../dev/temporal';
import { startWorkerProcess } from '../dev/worker-process';
import { markdownTable } from './lib/report';
import { spread } from './lib/stats';

const ROOT = path.resolve(__dirname, '..');
const BUNDLE = path.join(ROOT, 'dist/workflow-bundle.js');

export interface WorkerStartResult {
  prebuiltSeconds: number[];
  bundledSeconds: number[];
}

async function timeToReady(env: TestWorkflowEnvironment, bundle: string): Promise<number> {
  const started = performance.now();
  const worker = startWorkerProcess({
    temporalAddress: env.address,
    service: { url: 'http://127.0.0.1:9', apiKey: 'bench_unused' },
    env: { WORKER_WORKFLOW_BUNDLE: bundle },
  });
  await worker.ready;
  const seconds = (performance.now() - started) / 1000;
  await worker.kill('SIGTERM');
  return seconds;
}

/** Process spawn to "Worker started": with the prebuilt workflow bundle against bundling the sources at start. */
export async function workerStart(repeats: number): Promise<WorkerStartResult> {
  if (!fs.existsSync(BUNDLE)) {
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-workflow-bundle.ts'], { cwd: ROOT });
  }
  const env = await startTemporal();
  const result: WorkerStartResult = { prebuiltSeconds: [], bundledSeconds: [] };
  try {
    for (let i = 0; i < repeats; i += 1) {
      result.prebuiltSeconds.push(await timeToReady(env, BUNDLE));
      result.bundledSeconds.push(await timeToReady(env, 'off'));
    }
  } finally {
    await env.teardown();
  }
  return result;
}

export function workerStartTable(result: WorkerStartResult): string {
  const ratios = result.bundledSeconds.map((value, i) => value / (result.prebuiltSeconds[i] ?? Number.NaN));
  return markdownTable(
    ['workflow code', 'spawn to ready (s)', 'ratio'],
    [
      ['prebuilt bundle (`npm run build`)', spread(result.prebuiltSeconds, 2), '1'],
      ['bundled at start', spread(result.bundledSeconds, 2), spread(ratios, 1)],
    ],
  );
}
