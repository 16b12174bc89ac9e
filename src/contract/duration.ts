import { msToNumber } from '@temporalio/common/lib/time';

/** A duration as the Temporal SDKs take it: milliseconds, or a string such as '5s', '2 minutes' or '1h30m'. */
export type DurationInput = string | number;

const GO_STYLE = /^(?:\d+(?:\.\d+)?(?:h|m|s|ms))+$/;
const GO_PART = /(\d+(?:\.\d+)?)(h|ms|m|s)/g;
/** The units of the Go form, largest first. */
export const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/**
 * Parses a duration to milliseconds. Accepts what the TypeScript SDK accepts (the `ms` format) and the
 * compound Go form the Temporal CLI prints ('1h30m'). Returns undefined when the value is not a duration.
 */
export function parseDuration(value: DurationInput): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const text = value.trim();
  if (GO_STYLE.test(text)) {
    let total = 0;
    for (const [, amount, unit] of text.matchAll(GO_PART))
      total += Number(amount) * (UNIT_MS[unit ?? ''] ?? NaN);
    return Number.isFinite(total) ? total : undefined;
  }
  try {
    const ms = msToNumber(text as Parameters<typeof msToNumber>[0]);
    return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}
