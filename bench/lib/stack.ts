import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator';
import { startTemporal, type DevServerOptions } from '../../test/helpers/temporal';
import { startWorkerProcess, type WorkerProcess } from '../../test/helpers/worker-process';

/** A dev server, the simulator, and the production worker as its own process (so its RSS and CPU are its own). */
export interface BenchStack {
  env: TestWorkflowEnvironment;
  client: Client;
  sim: Simulator;
  worker: WorkerProcess;
  exportDir: string;
  stop(): Promise<void>;
}

export async function startBenchStack(
  simulator: SimulatorOptions = {},
  workerEnv: Record<string, string> = {},
  devServer: DevServerOptions = {},
): Promise<BenchStack> {
  const [env, sim, exportDir] = await Promise.all([
    startTemporal(devServer),
    startSimulator(simulator),
    fs.mkdtemp(path.join(os.tmpdir(), 'bench-')),
  ]);
  const worker = startWorkerProcess({
    temporalAddress: env.address,
    service: sim,
    exportDir,
    env: workerEnv,
  });
  await worker.ready;
  return {
    env,
    client: env.client,
    sim,
    worker,
    exportDir,
    async stop() {
      await worker.kill('SIGTERM');
      await Promise.all([sim.close(), env.teardown()]);
      await fs.rm(exportDir, { recursive: true, force: true });
    },
  };
}

export const workerPid = (stack: BenchStack): number => {
  const pid = stack.worker.child.pid;
  if (pid === undefined) throw new Error('the worker process has no pid');
  return pid;
};
