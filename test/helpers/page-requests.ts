/**
 * An export's page requests without its end check: the last request for page 0, when page 0 was requested before
 * (docs/visitors-export.md, "An export is final only when its pages agree").
 */
export function withoutEndCheck<T extends { query: Record<string, string | undefined> }>(requests: T[]): T[] {
  const first = requests.findIndex((r) => r.query.offset === '0');
  const last = requests.map((r) => r.query.offset === '0').lastIndexOf(true);
  return last > first ? requests.filter((_, index) => index !== last) : requests;
}
