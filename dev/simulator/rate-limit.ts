const HOUR_MS = 3_600_000;

export type LimitedRoute = 'createJob' | 'sendMessage';

interface Window {
  times: number[];
  /** Index of the oldest admission still inside the hour; older ones are dropped lazily. */
  head: number;
}

/** Rolling one-hour windows per operation and project; a refused request does not count. */
export class RateLimiter {
  #windows = new Map<string, Window>();

  constructor(
    private readonly perHour: Record<LimitedRoute, number>,
    private readonly clock: () => number,
  ) {}

  admit(route: LimitedRoute, projectId: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const now = this.clock();
    const key = `${route}\u0000${projectId}`;
    let window = this.#windows.get(key);
    if (!window) {
      window = { times: [], head: 0 };
      this.#windows.set(key, window);
    }
    while (window.head < window.times.length && (window.times[window.head] ?? now) <= now - HOUR_MS) {
      window.head += 1;
    }
    if (window.head > 1024 && window.head * 2 > window.times.length) {
      window.times = window.times.slice(window.head);
      window.head = 0;
    }
    if (window.times.length - window.head >= this.perHour[route]) {
      const oldest = window.times[window.head] ?? now;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest + HOUR_MS - now) / 1000)) };
    }
    window.times.push(now);
    return { ok: true };
  }

  clear(): void {
    this.#windows = new Map();
  }
}
