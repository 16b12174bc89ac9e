import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { handleControl, isControlPath, type ControlDeps } from './control-routes';
import type { Counters } from './counters';
import { injectedReply, shapeApplies, shapedReply } from './fault-responses';
import type { FaultRules } from './faults';
import {
  encode,
  errorReply,
  inServiceShape,
  MAX_BODY_BYTES,
  methodNotAllowed,
  notFound,
  parseBody,
  readBody,
  write,
  type RawReply,
  type Reply,
} from './http';
import type { RequestLog } from './request-log';
import { matchRoute } from './routes';
import { handleService, type ServiceDeps } from './service-routes';
import type { ErrorBodies, FaultRule, RequestLogEntry } from './types';

export interface PipelineDeps extends ServiceDeps {
  apiKey: string;
  faults: FaultRules;
  log: RequestLog;
  counters: Counters;
  control: ControlDeps;
  /** Aborted by close(): cuts injected latency short. */
  signal: AbortSignal;
  nextRequestId(): string;
  errorBodies: ErrorBodies;
}

/**
 * One request: auth, routing, faults by stage (delay, disrupt before or after the service acts, shape a 2xx
 * answer), the operation itself, and the log entry and counters of what was answered.
 */
export async function handleRequest(
  deps: PipelineDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const requestId = deps.nextRequestId();
  const at = deps.clock();
  const url = new URL(req.url ?? '/', 'http://simulator.invalid');
  const method = req.method ?? 'GET';
  const raw = await readBody(req, MAX_BODY_BYTES);

  if (isControlPath(url.pathname)) return control(deps, req, res, { requestId, at, url, method, raw });

  const match = matchRoute(method, url.pathname);
  const entry = deps.log.begin({
    requestId,
    at,
    route: match.kind === 'route' ? match.route : 'unknown',
    method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    ...(match.kind === 'route' ? { projectId: match.projectId } : {}),
    ...(match.kind === 'route' && match.jobId !== undefined ? { jobId: match.jobId } : {}),
    ...(typeof req.headers.traceparent === 'string' ? { traceparent: req.headers.traceparent } : {}),
    authOk: false,
  });
  const respondRaw = (reply: RawReply): void => {
    entry.status = reply.status;
    deps.counters.response(reply.status);
    write(res, reply, requestId, deps.clock());
  };
  const analytics = match.kind === 'route' && match.route === 'getVisitors';
  const errorBodies = match.kind === 'route' ? deps.projects.errorBodies(match.projectId) : deps.errorBodies;
  const respond = (reply: Reply): void =>
    respondRaw(encode(errorBodies === 'service' ? inServiceShape(reply, analytics) : reply));
  if (match.kind === 'route') deps.counters.request(match.route);

  if (!authorized(req.headers.authorization, deps.apiKey)) {
    return respond(errorReply(401, 'missing or invalid API key'));
  }
  entry.authOk = true;
  if (match.kind === 'not-found') return respond(notFound(`no route ${method} ${url.pathname}`));
  if (match.kind === 'method-not-allowed') return respond(methodNotAllowed(method, match.allowed));
  if (raw === 'too-large') {
    return respond(errorReply(413, `the request body exceeds ${MAX_BODY_BYTES} bytes`));
  }
  const body = parseBody(raw);
  const prompt = body.kind === 'json' ? (body.value as { prompt?: unknown } | null)?.prompt : undefined;
  if (typeof prompt === 'string') entry.prompt = prompt;

  const { route, projectId } = match;
  const latency = deps.faults.take('delay', route, projectId);
  if (latency) {
    entry.fault = 'latency';
    await sleep(latency.latencyMs ?? 0, undefined, { signal: deps.signal });
  }
  const disruption = deps.faults.take('disrupt', route, projectId);
  if (disruption) entry.fault = disruption.kind;
  if (disruption && disruption.afterProcessing !== true)
    return disrupt(deps, disruption, entry, req, respond);

  const reply = handleService(deps, {
    route,
    projectId,
    ...(match.jobId !== undefined ? { jobId: match.jobId } : {}),
    body,
    query: url.searchParams,
    entry,
  });
  if (disruption) return disrupt(deps, disruption, entry, req, respond);

  if (reply.status >= 200 && reply.status < 300) {
    const shape = deps.faults.take('shape', route, projectId, (rule) => shapeApplies(rule, reply.body));
    if (shape) {
      entry.fault = shape.kind;
      return respondRaw(shapedReply(shape, reply));
    }
  }
  respond(reply);
}

function disrupt(
  deps: PipelineDeps,
  rule: FaultRule,
  entry: RequestLogEntry,
  req: IncomingMessage,
  respond: (reply: Reply) => void,
): void {
  if (rule.kind === 'reset' || rule.kind === 'hang') {
    entry.status = rule.kind;
    deps.counters.response(rule.kind);
    // A hang keeps the socket open without answering; close() destroys it.
    if (rule.kind === 'reset') req.socket.resetAndDestroy();
    return;
  }
  respond(injectedReply(rule, deps.clock(), `https://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`));
}

function control(
  deps: PipelineDeps,
  req: IncomingMessage,
  res: ServerResponse,
  r: { requestId: string; at: number; url: URL; method: string; raw: Buffer | 'too-large' },
): void {
  let reset = false;
  const controlDeps: ControlDeps = {
    ...deps.control,
    reset: () => {
      reset = true;
      deps.control.reset();
    },
  };
  const reply = !isLoopback(req.socket.remoteAddress)
    ? errorReply(403, 'control routes answer loopback clients only')
    : r.raw === 'too-large'
      ? errorReply(413, `the request body exceeds ${MAX_BODY_BYTES} bytes`)
      : handleControl(controlDeps, r.method, r.url, parseBody(r.raw));
  // A reset empties the log; its own request belongs to the log it cleared.
  if (!reset) {
    const entry = deps.log.begin({
      requestId: r.requestId,
      at: r.at,
      route: 'control',
      method: r.method,
      path: r.url.pathname,
      query: Object.fromEntries(r.url.searchParams),
      authOk: true,
    });
    entry.status = reply.status;
    entry.processed = reply.status >= 200 && reply.status < 300;
  }
  write(res, encode(reply), r.requestId, deps.clock());
}

function authorized(header: string | undefined, apiKey: string): boolean {
  const presented = /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1];
  if (presented === undefined) return false;
  const a = Buffer.from(presented, 'utf8');
  const b = Buffer.from(apiKey, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}
