export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

export const median = (values: number[]) => percentile(values, 50);

/** "median (min-max)" of repeated measurements. */
export function spread(values: number[], digits = 1): string {
  if (values.length === 1) return (values[0] as number).toFixed(digits);
  const low = Math.min(...values).toFixed(digits);
  const high = Math.max(...values).toFixed(digits);
  return `${median(values).toFixed(digits)} (${low}-${high})`;
}
