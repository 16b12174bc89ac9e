import fs from 'node:fs';
import { DocsApiClient, type RequestOptions, type VisitorsQuery } from '../../src/docs-api/client';
import { docsApiFailure } from '../../src/docs-api/failures';
import { parseStagedChunkName, type StagedChunkName } from '../../src/exports/layout';
import { stagingDirectory } from './export-paths';

/** The chunks staged for `exportKey` under `exportDir` now, by first offset (read at once: from a heartbeat). */
export function stagedChunksNow(exportDir: string, exportKey: string): StagedChunkName[] {
  return fs
    .readdirSync(stagingDirectory(exportDir, exportKey))
    .map(parseStagedChunkName)
    .filter((chunk) => chunk !== undefined)
    .sort((a, b) => a.firstOffset - b.firstOffset);
}

/** The offsets of the pages `chunks` hold, pages of `pageSize` rows. */
export function offsetsIn(chunks: readonly StagedChunkName[], pageSize: number): number[] {
  return chunks.flatMap((chunk) =>
    Array.from({ length: chunk.pages }, (_, i) => chunk.firstOffset + i * pageSize),
  );
}

/** The offsets of the pages that chunks of these names hold, in their order. */
export function offsetsNamed(names: readonly string[], pageSize: number): number[] {
  return names.flatMap((name) => {
    const chunk = parseStagedChunkName(name);
    return chunk === undefined ? [] : offsetsIn([chunk], pageSize);
  });
}

/**
 * A client of the simulator whose request for the page at `offset` fails like a 500 would, after `delayMs` (the
 * other runs go on meanwhile). Close it after use.
 */
export function failingAt(
  sim: { url: string; apiKey: string },
  offset: number,
  delayMs: number,
): DocsApiClient {
  return new (class extends DocsApiClient {
    override async getVisitors(projectId: string, query: VisitorsQuery, options?: RequestOptions) {
      if (query.offset !== offset) return super.getVisitors(projectId, query, options);
      // 0: refused before any page answers (a timer could fire after the simulator's first answers).
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      throw docsApiFailure('server', 'refused by the test', { operation: 'getVisitors', status: 500 });
    }
  })({ baseUrl: sim.url, apiKey: sim.apiKey });
}
