import { startWorkerProcess, type WorkerProcess } from '../dev/worker-process';
import { workflowBundlePath } from '../dev/workflow-bundle';

export interface SupervisorOptions {
  temporalAddress: string;
  service: { url: string; apiKey: string };
  exportDir: string;
  /** Environment beyond the connection, the service and EXPORT_DIR (e.g. the budgets). */
  env?: Record<string, string>;
}

/**
 * Keeps one production worker process (src/worker.ts) running, as systemd or Kubernetes would: a worker that
 * exits on its own is started again. `kill` sends SIGKILL and starts the replacement.
 */
export class WorkerSupervisor {
  private current: WorkerProcess | undefined;
  private stopping = false;
  private readonly outputs: (() => string)[] = [];
  /** When each SIGKILL was sent. */
  readonly killTimes: number[] = [];
  /** Exits nobody asked for (then restarted). */
  unexpectedExits = 0;
  readonly startFailures: string[] = [];

  constructor(private readonly options: SupervisorOptions) {}

  async start(): Promise<void> {
    const worker = startWorkerProcess({
      temporalAddress: this.options.temporalAddress,
      service: this.options.service,
      exportDir: this.options.exportDir,
      env: { WORKER_WORKFLOW_BUNDLE: await workflowBundlePath(), ...this.options.env },
    });
    this.current = worker;
    this.outputs.push(() => worker.output());
    worker.child.once('exit', () => {
      if (this.current !== worker || this.stopping) return;
      this.unexpectedExits += 1;
      this.start().catch((error: unknown) => this.startFailures.push(String(error)));
    });
    await worker.ready;
  }

  async kill(): Promise<void> {
    const victim = this.current;
    this.current = undefined;
    this.killTimes.push(Date.now());
    await victim?.kill('SIGKILL');
    await this.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.current?.kill('SIGTERM');
  }

  /** Everything every worker process wrote, in start order. */
  output(): string {
    return this.outputs.map((read) => read()).join('\n');
  }
}
