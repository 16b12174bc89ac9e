import { encode, errorReply, tooManyRequests, type RawReply, type Reply } from './http';
import type { FaultRule } from './types';

export function retryAfterHeader(rule: FaultRule, nowMs: number): string {
  const spec = rule.retryAfter ?? { seconds: 1 };
  if ('seconds' in spec) return String(spec.seconds);
  return new Date(nowMs + spec.httpDateInSeconds * 1000).toUTCString();
}

/** The answer of a 'rateLimit', 'status' or 'redirect' rule; `httpsUrl` is the request's URL over https. */
export function injectedReply(rule: FaultRule, nowMs: number, httpsUrl: string): Reply {
  if (rule.kind === 'rateLimit') return tooManyRequests(retryAfterHeader(rule, nowMs));
  if (rule.kind === 'redirect') {
    const status = rule.redirect?.status ?? 301;
    return { status, headers: { location: rule.redirect?.location ?? httpsUrl } };
  }
  const status = rule.status ?? 500;
  const reply = errorReply(status, `injected HTTP ${status}`);
  return rule.retryAfter ? { ...reply, headers: { 'retry-after': retryAfterHeader(rule, nowMs) } } : reply;
}

type Body = Record<string, unknown>;

function isJob(body: unknown): body is Body {
  return typeof body === 'object' && body !== null && 'id' in body && 'status' in body;
}

function isVisitorsPage(body: unknown): body is Body & { visitors: Body[] } {
  return typeof body === 'object' && body !== null && Array.isArray((body as Body).visitors);
}

/** Whether a 'malformed' or 'drift' rule can change this answer (a drift of job fields cannot change a visitors page). */
export function shapeApplies(rule: FaultRule, body: unknown): boolean {
  if (rule.kind === 'malformed') return true;
  if (isJob(body)) return true;
  if (!isVisitorsPage(body)) return false;
  switch (rule.drift) {
    case 'extra-fields':
    case 'wrong-types':
    case 'odd-optional-types':
      return true;
    case 'missing-id':
      return body.visitors.length > 0;
    default:
      return false;
  }
}

/** A 2xx answer changed by a 'malformed' or 'drift' rule. */
export function shapedReply(rule: FaultRule, reply: Reply): RawReply {
  if (rule.kind === 'malformed') return malformed(rule, reply);
  return encode({ ...reply, body: drifted(rule, reply.body) });
}

function malformed(rule: FaultRule, reply: Reply): RawReply {
  const json = JSON.stringify(reply.body ?? {});
  const headers = { ...reply.headers };
  switch (rule.malformed) {
    case 'html-200':
      return {
        status: 200,
        headers: { ...headers, 'content-type': 'text/html; charset=utf-8' },
        payload:
          '<!DOCTYPE html><html><head><title>Sign in</title></head><body><h1>Sign in</h1></body></html>',
      };
    case 'no-content-type':
      return { status: reply.status, headers, payload: json };
    case 'truncated-json':
      return {
        status: reply.status,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: json.slice(0, Math.max(1, Math.floor(json.length / 2))),
      };
    default:
      return {
        status: reply.status,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: 'upstream answered: OK (not JSON)',
      };
  }
}

function drifted(rule: FaultRule, body: unknown): unknown {
  if (isJob(body)) return driftedJob(rule, body);
  if (isVisitorsPage(body)) return driftedPage(rule, body);
  return body;
}

function driftedJob(rule: FaultRule, job: Body): Body {
  if (rule.drift === undefined) return job;
  switch (rule.drift) {
    case 'unknown-status':
      return { ...job, status: 'paused_for_review' };
    case 'missing-id': {
      const { id: _id, ...rest } = job;
      return rest;
    }
    case 'extra-fields':
      return {
        ...job,
        source: { ...(job.source as Body), commit: '4f2a9c1' },
        tokensUsed: 1234,
        labels: ['docs', 'simulated'],
      };
    case 'wrong-types':
      return { ...job, status: 42, createdAt: Date.parse(String(job.createdAt)) };
    case 'odd-optional-types':
      return {
        ...job,
        model: { name: job.model, version: 2 },
        createdAt: Date.parse(String(job.createdAt)),
        source: repositoryOf(job),
      };
    case 'null-ref':
      return { ...job, source: { ...(job.source as Body), ref: null } };
    case 'archivedAt-omitted': {
      const { archivedAt: _archivedAt, ...rest } = job;
      return rest;
    }
  }
}

function driftedPage(rule: FaultRule, page: Body & { visitors: Body[] }): Body {
  switch (rule.drift) {
    case 'missing-id':
      return { ...page, visitors: page.visitors.map(({ path: _path, ...row }) => row) };
    case 'extra-fields':
      return {
        ...page,
        visitors: page.visitors.map((row) => ({ ...row, bounceRate: 0.42 })),
        sampling: { rate: 1 },
      };
    case 'wrong-types':
      return { ...page, hasMore: String(page.hasMore) };
    case 'odd-optional-types':
      return {
        ...page,
        totals: { ...(page.totals as Body), sessions: 'n/a' },
        visitors: page.visitors.map((row) => ({ ...row, bounceRate: null, tags: 'docs' })),
        sampling: 1,
        nextOffset: 'see hasMore',
      };
    default:
      return page;
  }
}

/** A job's `source.repository`, as the plain string an odd answer gives instead of the object. */
function repositoryOf(job: Body): string {
  const source = job.source;
  const repository = typeof source === 'object' && source !== null ? (source as Body).repository : undefined;
  return typeof repository === 'string' ? repository : '';
}
