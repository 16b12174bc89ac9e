/**
 * The paths a merge has written, as 64-bit fingerprints with the page of each (an open-addressing table of typed
 * arrays: 12 bytes a path, 24 MB for 1,000,000 paths where a Set of the strings took over 100). A fingerprint
 * seen before only names pages to read again: the merge compares the paths there, so the check stays exact.
 */
export class SeenPaths {
  #hi = new Uint32Array(1 << 16);
  #lo = new Uint32Array(1 << 16);
  /** Page index + 1; 0 marks an empty slot. */
  #page = new Uint32Array(1 << 16);
  #size = 0;

  constructor(private readonly hash: (path: string) => [number, number] = fingerprint) {}

  /** Records `path`, read on page `page`; returns the pages of the paths recorded before with its fingerprint. */
  add(path: string, page: number): number[] {
    if ((this.#size + 1) * 2 > this.#page.length) this.#grow();
    const [hi, lo] = this.hash(path);
    const earlier: number[] = [];
    const mask = this.#page.length - 1;
    let slot = lo & mask;
    for (; this.#page[slot] !== 0; slot = (slot + 1) & mask) {
      if (this.#hi[slot] === hi && this.#lo[slot] === lo) earlier.push((this.#page[slot] ?? 1) - 1);
    }
    this.#set(slot, hi, lo, page + 1);
    this.#size += 1;
    return earlier;
  }

  #set(slot: number, hi: number, lo: number, pagePlusOne: number): void {
    this.#hi[slot] = hi;
    this.#lo[slot] = lo;
    this.#page[slot] = pagePlusOne;
  }

  #grow(): void {
    const [hi, lo, page] = [this.#hi, this.#lo, this.#page];
    this.#hi = new Uint32Array(hi.length * 2);
    this.#lo = new Uint32Array(lo.length * 2);
    this.#page = new Uint32Array(page.length * 2);
    const mask = this.#page.length - 1;
    for (let from = 0; from < page.length; from += 1) {
      if (page[from] === 0) continue;
      let slot = (lo[from] ?? 0) & mask;
      while (this.#page[slot] !== 0) slot = (slot + 1) & mask;
      this.#set(slot, hi[from] ?? 0, lo[from] ?? 0, page[from] ?? 0);
    }
  }
}

/** Two 32-bit hashes of the UTF-16 code units (FNV-1a and a murmur-style mix), each finalized. */
function fingerprint(path: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9 ^ path.length;
  for (let i = 0; i < path.length; i += 1) {
    const unit = path.charCodeAt(i);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x5bd1e995);
    b ^= b >>> 13;
  }
  return [mix32(a), mix32(b)];
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
