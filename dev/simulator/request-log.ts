import type { RequestLogEntry } from './types';

export type NewEntry = Omit<RequestLogEntry, 'seq' | 'status' | 'processed'>;

/**
 * Every request in arrival order, bounded: past `maxEntries` the oldest are dropped (in batches, so a long
 * benchmark costs amortised O(1) per request). Entries are appended on arrival and completed in place.
 */
export class RequestLog {
  #entries: RequestLogEntry[] = [];
  #seq = 0;

  constructor(private readonly maxEntries: number) {}

  begin(fields: NewEntry): RequestLogEntry {
    const entry: RequestLogEntry = { seq: ++this.#seq, ...fields, status: 0, processed: false };
    this.#entries.push(entry);
    if (this.#entries.length >= this.maxEntries * 2) {
      this.#entries.splice(0, this.#entries.length - this.maxEntries);
    }
    return entry;
  }

  /** Copies of the kept entries, optionally only those after sequence number `afterSeq`. */
  entries(afterSeq = 0): RequestLogEntry[] {
    const start = Math.max(0, this.#entries.length - this.maxEntries);
    const kept = this.#entries.slice(start);
    const from = afterSeq > 0 ? kept.findIndex((e) => e.seq > afterSeq) : 0;
    return (from < 0 ? [] : kept.slice(from)).map((e) => ({ ...e, query: { ...e.query } }));
  }

  clear(): void {
    this.#entries = [];
    this.#seq = 0;
  }
}
