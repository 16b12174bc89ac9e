import { request } from 'undici';
import type { Simulator } from '../../../dev/simulator';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

export interface CallOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is (for invalid JSON). */
  raw?: string;
  /** The key to present; null: no Authorization header. Default: the simulator's key. */
  key?: string | null;
  headersTimeout?: number;
}

/** A real HTTP request to the simulator; the whole body is read. */
export async function call(
  sim: Pick<Simulator, 'url' | 'apiKey'>,
  method: 'GET' | 'POST' | 'DELETE' | 'PUT',
  path: string,
  options: CallOptions = {},
): Promise<Answer> {
  const key = options.key === undefined ? sim.apiKey : options.key;
  const headers: Record<string, string> = {};
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await request(`${sim.url}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
    ...(options.headersTimeout !== undefined ? { headersTimeout: options.headersTimeout } : {}),
  });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

export interface JobJson {
  id: string;
  status: string;
  source: { repository: string; ref: string };
  model: string;
  prLink: string | null;
  createdAt: string;
  archivedAt?: string | null;
}

export interface VisitorsJson {
  totals: { human: number; ai: number; total: number };
  visitors: { path: string; human: number; ai: number; total: number }[];
  hasMore: boolean;
}

export interface ErrorJson {
  error: { code: string; message: string; field?: string };
}

/** The four operations, answering the status and the parsed body. */
export function api(sim: Pick<Simulator, 'url' | 'apiKey'>) {
  return {
    createJob: (projectId: string, body: unknown = { prompt: 'Fix the typos' }) =>
      call(sim, 'POST', `/v2/agent/${projectId}/job`, { body }),
    getJob: (projectId: string, jobId: string) => call(sim, 'GET', `/v2/agent/${projectId}/job/${jobId}`),
    sendMessage: (projectId: string, jobId: string, body: unknown = { prompt: 'And the FAQ' }) =>
      call(sim, 'POST', `/v2/agent/${projectId}/job/${jobId}/message`, { body }),
    visitors: (projectId: string, query: Record<string, string | number> = {}) => {
      const search = new URLSearchParams(
        Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
      ).toString();
      return call(sim, 'GET', `/v1/analytics/${projectId}/visitors${search ? `?${search}` : ''}`);
    },
  };
}

export function asJob(answer: Answer): JobJson {
  return answer.json as JobJson;
}

export function asPage(answer: Answer): VisitorsJson {
  return answer.json as VisitorsJson;
}

export function asError(answer: Answer): ErrorJson['error'] {
  return (answer.json as ErrorJson).error;
}

/** A clock that tests move by hand. */
export function manualClock(start = Date.UTC(2026, 10, 1, 12)) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}
