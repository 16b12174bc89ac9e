/**
 * The paths a merge has written, about 12 bytes each (a 64-bit fingerprint, the page of its first occurrence) in
 * typed arrays: 24 MB for 1,000,000 paths where a Set took 100. A fingerprint seen before only names candidate
 * pages, which the merge reads again: the check stays exact.
 */
export class SeenPaths {
  #hi = new Uint32Array(1 << 16);
  #lo = new Uint32Array(1 << 16);
  /** Page index + 1 of the first occurrence; 0 marks an empty slot. */
  #page = new Uint32Array(1 << 16);
  #size = 0;
  /** The last path fingerprinted and its fingerprint: the merge asks `candidates`, then `add`s the same path. */
  #lastPath: string | undefined;
  #lastHi = 0;
  #lastLo = 0;

  get size(): number {
    return this.#size;
  }

  /** The pages whose earlier paths share this path's fingerprint (empty: certainly new). */
  candidates(path: string): number[] {
    this.#fingerprint(path);
    const hi = this.#lastHi;
    const lo = this.#lastLo;
    const pages: number[] = [];
    const mask = this.#page.length - 1;
    for (let slot = lo & mask; this.#page[slot] !== 0; slot = (slot + 1) & mask) {
      if (this.#hi[slot] === hi && this.#lo[slot] === lo) pages.push((this.#page[slot] ?? 1) - 1);
    }
    return pages;
  }

  /** Records a path written from page `page` (a path already added with the same fingerprint is kept too). */
  add(path: string, page: number): void {
    if ((this.#size + 1) * 2 > this.#page.length) this.#grow();
    this.#fingerprint(path);
    this.#insert(this.#lastHi, this.#lastLo, page + 1);
    this.#size += 1;
  }

  /** Two 32-bit hashes of the UTF-16 code units (FNV-1a and a murmur-style mix), each finalized. */
  #fingerprint(path: string): void {
    if (path === this.#lastPath) return;
    let a = 0x811c9dc5;
    let b = 0x9e3779b9 ^ path.length;
    for (let i = 0; i < path.length; i += 1) {
      const unit = path.charCodeAt(i);
      a = Math.imul(a ^ unit, 0x01000193);
      b = Math.imul(b ^ unit, 0x5bd1e995);
      b ^= b >>> 13;
    }
    this.#lastHi = mix32(a);
    this.#lastLo = mix32(b);
    this.#lastPath = path;
  }

  #insert(hi: number, lo: number, pagePlusOne: number): void {
    const mask = this.#page.length - 1;
    let slot = lo & mask;
    while (this.#page[slot] !== 0) slot = (slot + 1) & mask;
    this.#hi[slot] = hi;
    this.#lo[slot] = lo;
    this.#page[slot] = pagePlusOne;
  }

  #grow(): void {
    const [hi, lo, page] = [this.#hi, this.#lo, this.#page];
    this.#hi = new Uint32Array(hi.length * 2);
    this.#lo = new Uint32Array(lo.length * 2);
    this.#page = new Uint32Array(page.length * 2);
    for (let slot = 0; slot < page.length; slot += 1) {
      const p = page[slot] ?? 0;
      if (p !== 0) this.#insert(hi[slot] ?? 0, lo[slot] ?? 0, p);
    }
  }
}

/** murmur3's fmix32 finaliser: every input bit reaches every output bit, so low bits index a table well. */
export function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
