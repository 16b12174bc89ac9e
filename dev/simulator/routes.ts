import type { RouteName } from './types';

export type RouteMatch =
  | { kind: 'route'; route: RouteName; projectId: string; jobId?: string }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

interface RouteSpec {
  route: RouteName;
  method: string;
  /** Segments; ':name' captures one non-empty, percent-decoded segment. */
  pattern: string[];
}

const ROUTES: RouteSpec[] = [
  { route: 'createJob', method: 'POST', pattern: ['v2', 'agent', ':projectId', 'job'] },
  { route: 'getJob', method: 'GET', pattern: ['v2', 'agent', ':projectId', 'job', ':jobId'] },
  {
    route: 'sendMessage',
    method: 'POST',
    pattern: ['v2', 'agent', ':projectId', 'job', ':jobId', 'message'],
  },
  { route: 'getVisitors', method: 'GET', pattern: ['v1', 'analytics', ':projectId', 'visitors'] },
];

export function matchRoute(method: string, pathname: string): RouteMatch {
  const segments = splitPath(pathname);
  if (!segments) return { kind: 'not-found' };
  const hits = ROUTES.flatMap((spec) => {
    const params = matchPattern(spec.pattern, segments);
    return params ? [{ spec, params }] : [];
  });
  const hit = hits.find((h) => h.spec.method === method);
  if (!hit) {
    return hits.length > 0
      ? { kind: 'method-not-allowed', allowed: hits.map((h) => h.spec.method) }
      : { kind: 'not-found' };
  }
  const { projectId, jobId } = hit.params;
  if (projectId === undefined) return { kind: 'not-found' };
  return jobId === undefined
    ? { kind: 'route', route: hit.spec.route, projectId }
    : { kind: 'route', route: hit.spec.route, projectId, jobId };
}

/** Percent-decoded segments of an absolute path; undefined for an undecodable one. */
export function splitPath(pathname: string): string[] | undefined {
  try {
    return pathname.split('/').slice(1).map(decodeURIComponent);
  } catch {
    return undefined;
  }
}

export function matchPattern(
  pattern: readonly string[],
  segments: readonly string[],
): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, part] of pattern.entries()) {
    const segment = segments[i] ?? '';
    if (part.startsWith(':')) {
      if (segment === '') return undefined;
      params[part.slice(1)] = segment;
    } else if (part !== segment) {
      return undefined;
    }
  }
  return params;
}
