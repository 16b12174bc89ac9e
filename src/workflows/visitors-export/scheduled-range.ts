/**
 * The range a scheduled run exports: the calendar day before the schedule's nominal time, in the
 * schedule's time zone, as [YYYY-MM-DD, YYYY-MM-DD) like the service's exclusive dateTo.
 */
export function previousDayRange(nominalTime: Date, timeZone: string): { dateFrom: string; dateTo: string } {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(nominalTime);
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  const localDay = Date.UTC(get('year'), get('month') - 1, get('day'));
  return { dateFrom: isoDate(localDay - 86_400_000), dateTo: isoDate(localDay) };
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
