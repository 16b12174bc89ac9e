/**
 * The paths a merge has written, as 64-bit fingerprints in an open-addressing table of typed arrays: 8 bytes a
 * path, 16 MB for 1,000,000 paths where a Set of the strings took over 100. Two paths share a fingerprint with
 * probability about n²/2⁶⁵ (3·10⁻⁸ for a million paths); the later one would then be reported as a duplicate.
 */
export class SeenPaths {
  #hi = new Uint32Array(1 << 16);
  #lo = new Uint32Array(1 << 16);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Records `path`; false when it was recorded before. */
  add(path: string): boolean {
    if ((this.#size + 1) * 2 > this.#hi.length) this.#grow();
    const [hi, lo] = fingerprint(path);
    if (!this.#insert(hi, lo)) return false;
    this.#size += 1;
    return true;
  }

  #insert(hi: number, lo: number): boolean {
    const mask = this.#hi.length - 1;
    let slot = lo & mask;
    for (; this.#hi[slot] !== 0 || this.#lo[slot] !== 0; slot = (slot + 1) & mask) {
      if (this.#hi[slot] === hi && this.#lo[slot] === lo) return false;
    }
    this.#hi[slot] = hi;
    this.#lo[slot] = lo;
    return true;
  }

  #grow(): void {
    const [hi, lo] = [this.#hi, this.#lo];
    this.#hi = new Uint32Array(hi.length * 2);
    this.#lo = new Uint32Array(lo.length * 2);
    for (let slot = 0; slot < hi.length; slot += 1) {
      if (hi[slot] !== 0 || lo[slot] !== 0) this.#insert(hi[slot] ?? 0, lo[slot] ?? 0);
    }
  }
}

/**
 * Two 32-bit hashes of the UTF-16 code units (FNV-1a and a murmur-style mix), each finalized; never both 0 (an
 * empty slot).
 */
function fingerprint(path: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9 ^ path.length;
  for (let i = 0; i < path.length; i += 1) {
    const unit = path.charCodeAt(i);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x5bd1e995);
    b ^= b >>> 13;
  }
  return [mix32(a), mix32(b) || 1];
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
