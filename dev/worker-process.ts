import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

const WORKER_ENTRY = path.resolve(__dirname, '../src/worker.ts');

export interface WorkerProcessOptions {
  temporalAddress: string;
  service: { url: string; apiKey: string };
  exportDir?: string;
  env?: Record<string, string>;
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves once the worker logged that it started polling. */
  ready: Promise<void>;
  kill(signal: NodeJS.Signals): Promise<number | null>;
}

/** Runs the production entry point (src/worker.ts) as its own process, configured by the environment. */
export function startWorkerProcess(options: WorkerProcessOptions): WorkerProcess {
  // node itself, not the tsx CLI: the CLI runs the program in a grandchild that signals would not reach.
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_ENTRY], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TEMPORAL_ADDRESS: options.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      DOCS_API_BASE_URL: options.service.url,
      DOCS_API_KEY: options.service.apiKey,
      // Like the simulator's budgets, off unless a test sets them (in env).
      DOCS_API_ANALYTICS_RATE_LIMIT: '1000000/1h',
      DOCS_API_AGENT_RATE_LIMIT: '1000000/1h',
      ...(options.exportDir ? { EXPORT_DIR: options.exportDir } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (output.includes('Worker started')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`worker process exited (${code}) before ready:\n${output}`)),
    );
  });
  ready.catch(() => undefined);
  return {
    child,
    output: () => output,
    ready,
    async kill(signal) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}
