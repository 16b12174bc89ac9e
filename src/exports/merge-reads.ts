import { InvariantError } from '../contract/errors';
import type { VisitorRow } from '../contract/visitors-export';
import { parseStagedChunkName } from './layout';
import type { StagedPageRows, StagedSource } from './staged-objects';
import type { ExportStaging } from './staging';

/** Pages a chunk holds, from its name. */
function pagesIn(object: string): number {
  return parseStagedChunkName(object)?.pages ?? 1;
}

/** The rows of `source`'s page in its object's pages; InvariantError when the object holds another page there. */
function rowsAt(source: StagedSource, pages: readonly StagedPageRows[]): readonly VisitorRow[] {
  const page = pages[source.position];
  if (page?.offset !== source.offset) {
    throw new InvariantError(
      `staged object ${source.object} holds no page at offset ${source.offset} (position ${source.position})`,
    );
  }
  return page.rows;
}

/**
 * The merge's reads: each staged object read once, in page order, up to about `pagesAhead` pages ahead (at least
 * two objects), so object-storage requests hide each other's latency in bounded memory; an object is let go after
 * its last page. Kept in arrays, not a Map: a Map doubled the 1,000,000-row merge's RSS (bench/merge-memory.ts).
 */
export class ObjectReadAhead {
  /** Staged objects in the order of their first page. */
  readonly #objects: string[] = [];
  /** Per page (index into sources): its object's index in #objects. */
  readonly #objectOf: number[];
  /** Per object: the index of its last page; the pages it holds. */
  readonly #lastUse: number[] = [];
  readonly #sizes: number[] = [];
  /** Per object: its read, from launched until its last page is handed out. */
  readonly #reads: (Promise<StagedPageRows[]> | undefined)[] = [];
  #held = 0;
  #heldPages = 0;
  #launched = 0;

  constructor(
    private readonly staging: ExportStaging,
    private readonly sources: readonly StagedSource[],
    private readonly signal: AbortSignal,
    private readonly pagesAhead: number,
  ) {
    const indexOf = new Map<string, number>();
    this.#objectOf = sources.map((source, index) => {
      let object = indexOf.get(source.object);
      if (object === undefined) {
        object = this.#objects.push(source.object) - 1;
        indexOf.set(source.object, object);
        this.#sizes[object] = pagesIn(source.object);
      }
      this.#lastUse[object] = index;
      return object;
    });
  }

  /** At most this many reads are in flight at once (for the abort signal's listeners). */
  static maxReads(pagesAhead: number): number {
    return Math.max(2, pagesAhead);
  }

  /** The rows of the page at `index` of the sources; asked for in increasing order. */
  async page(index: number): Promise<readonly VisitorRow[]> {
    const source = this.sources[index];
    const object = this.#objectOf[index];
    if (source === undefined || object === undefined) throw new InvariantError(`no staged page ${index}`);
    this.#fill();
    const read = this.#reads[object];
    if (read === undefined) throw new InvariantError(`staged object ${source.object} was not read`);
    const rows = rowsAt(source, await read);
    if (this.#lastUse[object] === index) {
      this.#reads[object] = undefined;
      this.#held -= 1;
      this.#heldPages -= this.#sizes[object] ?? 1;
      this.#fill();
    }
    return rows;
  }

  #fill(): void {
    for (let next = this.#objects[this.#launched]; next !== undefined; next = this.#objects[this.#launched]) {
      const pages = this.#sizes[this.#launched] ?? 1;
      if (this.#held >= 2 && this.#heldPages + pages > this.pagesAhead) return;
      const read = this.staging.readObject(next, this.signal);
      read.catch(() => undefined); // reported when its turn comes
      this.#reads[this.#launched] = read;
      this.#held += 1;
      this.#heldPages += pages;
      this.#launched += 1;
    }
  }
}
