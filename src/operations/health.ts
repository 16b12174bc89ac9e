import http from 'node:http';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { State as WorkerState } from '@temporalio/worker';

/** A check's answer: healthy or not, and the reason an operator reads in the probe's body. */
export interface Probe {
  ok: boolean;
  reason: string;
}

export interface HealthChecks {
  /** /livez: the process and its runtime are alive (answering at all proves the event loop turns). */
  live: () => Probe;
  /** /readyz: the worker polls and the server answers. */
  ready: () => Probe;
}

/**
 * A worker's checks: live unless the worker failed (its process is then on its way out); ready only while it
 * runs (not during start-up, not once shutdown begins) and the server answers.
 */
export function workerChecks(state: () => WorkerState | undefined, server: () => Probe): HealthChecks {
  return {
    live: () => {
      const current = state();
      return { ok: current !== 'FAILED', reason: `worker ${current?.toLowerCase() ?? 'starting'}` };
    },
    ready: () => {
      const current = state();
      if (current !== 'RUNNING')
        return { ok: false, reason: `worker ${current?.toLowerCase() ?? 'starting'}` };
      const reach = server();
      return { ok: reach.ok, reason: reach.ok ? 'worker running, server reachable' : reach.reason };
    },
  };
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** Serves GET/HEAD /livez and /readyz: 200 when the check holds, 503 with its reason when not. */
export async function startHealthServer(
  port: number,
  checks: HealthChecks,
  host = '0.0.0.0',
): Promise<HealthServer> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const check = path === '/livez' ? checks.live : path === '/readyz' ? checks.ready : undefined;
    if (check === undefined || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: /livez or /readyz\n');
      return;
    }
    const probe = check();
    response
      .writeHead(probe.ok ? 200 : 503, { 'content-type': 'text/plain', 'cache-control': 'no-store' })
      .end(`${probe.reason}\n`);
  });
  // A probe holds no connection open: keep-alive would only delay close() at shutdown.
  server.keepAliveTimeout = 0;
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface ReachabilityOptions {
  intervalMs?: number;
  /** How long one check may take before it counts as a failure. */
  timeoutMs?: number;
  /** How long after its last answer the server still counts as reachable: one lost check is not an outage. */
  toleranceMs?: number;
  now?: () => number;
}

/**
 * Whether the Temporal server answered recently: a check every 5 s, and the server lost once none answered
 * for 15 s. So /readyz turns 503 within 20 s of losing the server (the bound is 30 s).
 */
export class ServerReachability {
  readonly #check: (deadline: Date) => Promise<void>;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  readonly #toleranceMs: number;
  readonly #now: () => number;
  #lastAnswerAt: number | undefined;
  #lastError = 'not checked yet';
  readonly #stop = new AbortController();

  constructor(check: (deadline: Date) => Promise<void>, options: ReachabilityOptions = {}) {
    this.#check = check;
    this.#intervalMs = options.intervalMs ?? 5_000;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#toleranceMs = options.toleranceMs ?? 15_000;
    this.#now = options.now ?? Date.now;
  }

  /** Checks now and then every interval until stop(); the loop never keeps the process alive. */
  start(): void {
    void this.#loop();
  }

  stop(): void {
    this.#stop.abort();
  }

  /** One check; exposed for tests and for start-up, which waits for the first answer. */
  async checkOnce(): Promise<void> {
    try {
      await this.#check(new Date(this.#now() + this.#timeoutMs));
      this.#lastAnswerAt = this.#now();
    } catch (error) {
      this.#lastError = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    }
  }

  probe(): Probe {
    const last = this.#lastAnswerAt;
    if (last !== undefined && this.#now() - last <= this.#toleranceMs) {
      return { ok: true, reason: 'server reachable' };
    }
    const since =
      last === undefined ? 'never answered' : `no answer for ${Math.round((this.#now() - last) / 1000)} s`;
    return { ok: false, reason: `server unreachable (${since}): ${this.#lastError}` };
  }

  async #loop(): Promise<void> {
    const { signal } = this.#stop;
    while (!signal.aborted) {
      await this.checkOnce();
      try {
        await sleep(this.#intervalMs, undefined, { signal, ref: false });
      } catch {
        return;
      }
    }
  }
}
