import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator';
import { startTemporal, type DevServerOptions } from './temporal';
import { startTestWorker, type TestWorker, type TestWorkerOptions } from './worker';

/** The real parts one test file runs against: a dev server, the simulator, a worker and an export directory. */
export interface TestStack {
  env: TestWorkflowEnvironment;
  sim: Simulator;
  worker: TestWorker;
  exportDir: string;
  /** Stops the worker first (so no task runs against a closed simulator), then the rest; removes exportDir. */
  stop(): Promise<void>;
}

export interface TestStackOptions {
  /** Names the temporary export directory, to tell leftovers apart. */
  name: string;
  temporal?: DevServerOptions;
  simulator?: SimulatorOptions;
  /** Worker options beyond the service and export directory; may use the started simulator. */
  worker?: (sim: Simulator) => Omit<TestWorkerOptions, 'service' | 'exportDir'>;
}

export async function startStack(options: TestStackOptions): Promise<TestStack> {
  const [env, sim, exportDir] = await Promise.all([
    startTemporal(options.temporal),
    startSimulator(options.simulator),
    fs.mkdtemp(path.join(os.tmpdir(), `${options.name}-`)),
  ]);
  const worker = await startTestWorker(env, { service: sim, exportDir, ...options.worker?.(sim) });
  return {
    env,
    sim,
    worker,
    exportDir,
    async stop() {
      await worker.stop();
      await Promise.all([sim.close(), env.teardown()]);
      await fs.rm(exportDir, { recursive: true, force: true });
    },
  };
}
