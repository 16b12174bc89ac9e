import http from 'node:http';
import { once } from 'node:events';
import type { LogEntry, Logger, State as WorkerState } from '@temporalio/worker';

/** A check's answer: healthy or not, and the reason an operator reads in the probe's body. */
export interface Probe {
  ok: boolean;
  reason: string;
}

/**
 * Serves GET/HEAD /livez and /readyz: 200 when the check holds, 503 with its reason when not. Live unless the
 * worker failed (its process is then on its way out; answering at all proves the event loop turns); ready only
 * while it runs (not during start-up, not once shutdown begins) and the server answers.
 */
export async function startHealthServer(
  port: number,
  worker: () => WorkerState | undefined,
  reachability: () => Probe,
) {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (
      (path !== '/livez' && path !== '/readyz') ||
      (request.method !== 'GET' && request.method !== 'HEAD')
    ) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: /livez or /readyz\n');
      return;
    }
    const state = worker();
    const reason = `worker ${state?.toLowerCase() ?? 'starting'}`;
    let probe: Probe = { ok: path === '/livez' ? state !== 'FAILED' : state === 'RUNNING', reason };
    if (path === '/readyz' && probe.ok) {
      const reach = reachability();
      probe = reach.ok ? { ok: true, reason: 'worker running, server reachable' } : reach;
    }
    response
      .writeHead(probe.ok ? 200 : 503, { 'content-type': 'text/plain', 'cache-control': 'no-store' })
      .end(`${probe.reason}\n`);
  });
  // A probe holds no connection open: keep-alive would only delay close() at shutdown.
  server.keepAliveTimeout = 0;
  server.listen(port, '0.0.0.0');
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

/** A check every 5 s, given 5 s to answer; the server is lost once none answered for 15 s. */
const CHECK_INTERVAL_MS = 5_000;
const CHECK_TIMEOUT_MS = 5_000;
/** One lost check is not an outage. */
const TOLERANCE_MS = 15_000;
/** Where the core logs a call it retries; the server did not answer it. */
const CORE_RETRY_TARGET = 'temporalio_client::retry';

/**
 * Whether the Temporal server answered recently. /readyz turns 503 within 20 s of losing the server (the issue's
 * bound is 30 s). An outage is two lines: an error when the server is lost, an info when it answers again.
 */
export class ServerReachability {
  readonly #check: (deadline: Date) => Promise<void>;
  readonly #address: string;
  readonly #logger: Logger;
  readonly #now: () => number;
  #lastAnswerAt: number | undefined;
  #lastError = 'not checked yet';
  /** While the server is lost: its last answer (or the time it was lost, when it never answered). */
  #lostSince: number | undefined;
  #unansweredLogged = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(check: (deadline: Date) => Promise<void>, address: string, logger: Logger, now = Date.now) {
    this.#check = check;
    this.#address = address;
    this.#logger = logger;
    this.#now = now;
  }

  /** Checks now and then every interval until stop(); the timer never keeps the process alive. */
  start(): void {
    void this.checkOnce();
    this.#timer = setInterval(() => void this.checkOnce(), CHECK_INTERVAL_MS).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** One check. */
  async checkOnce(): Promise<void> {
    try {
      await this.#check(new Date(this.#now() + CHECK_TIMEOUT_MS));
    } catch (error) {
      this.#lastError = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
      const probe = this.probe();
      if (!probe.ok && this.#lostSince === undefined) {
        this.#lostSince = this.#lastAnswerAt ?? this.#now();
        this.#logger.error(`Lost the Temporal server at ${this.#address}: ${probe.reason}`, {
          address: this.#address,
        });
      }
      return;
    }
    this.#lastAnswerAt = this.#now();
    this.#unansweredLogged = false;
    if (this.#lostSince !== undefined) {
      const downSeconds = Math.round((this.#lastAnswerAt - this.#lostSince) / 1000);
      this.#lostSince = undefined;
      const message = `Temporal server at ${this.#address} reachable again after ${downSeconds} s without an answer`;
      this.#logger.info(message, { address: this.#address, downSeconds });
    }
  }

  probe(): Probe {
    const last = this.#lastAnswerAt;
    if (last !== undefined && this.#now() - last <= TOLERANCE_MS) {
      return { ok: true, reason: 'server reachable' };
    }
    const since =
      last === undefined ? 'never answered' : `no answer for ${Math.round((this.#now() - last) / 1000)} s`;
    return { ok: false, reason: `server unreachable (${since}): ${this.#lastError}` };
  }

  /**
   * Whether a log entry is muted: the SDK core's line about a call the server did not answer (a retry, a failed
   * poll) is written once until the server answers a check again. Each poller and each call would repeat it every
   * second or so for the whole outage, which has its own two lines.
   */
  mutes(entry: LogEntry): boolean {
    const { sdkComponent, target } = entry.meta ?? {};
    const unanswered = target === CORE_RETRY_TARGET || entry.message.startsWith('Error while polling for');
    if (sdkComponent !== 'core' || !unanswered) return false;
    const muted = this.#unansweredLogged;
    this.#unansweredLogged = true;
    return muted;
  }
}
