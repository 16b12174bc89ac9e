import type { Readable } from 'node:stream';

/**
 * An object written in pieces that becomes visible at its key only by `commit`, whole: a local file renamed over
 * the target, or an S3 multipart upload completed. `abort` leaves the key as it was.
 */
export interface FinalObjectWriter {
  write(chunk: string | Uint8Array): Promise<void>;
  /** Bytes written in all. */
  commit(): Promise<number>;
  abort(): Promise<void>;
}

/**
 * Where exports go: a local directory or an S3 bucket (and prefix). Keys are relative and '/'-separated
 * (`acme/2026-11-01_2026-11-02/visitors.csv`, `.staging/<export>/page-….ndjson`), the same layout on both.
 */
export interface ExportDestination {
  /** The destination as users name it: an absolute directory or `s3://bucket[/prefix]`. */
  readonly root: string;
  /** What the result and the CLI print for a key: an absolute path, or an `s3://` URI. */
  location(key: string): string;
  /**
   * Checks that the destination exists and takes a write, before an export fetches anything; throws
   * DestinationUnavailableError when it cannot (missing bucket, wrong credentials, no permission).
   */
  probe(): Promise<void>;
  /** Makes a staging folder ready for pages (idempotent); a page is staged only into a prepared folder. */
  prepareStaging(folder: string): Promise<void>;
  /**
   * Writes one page whole under `folder/name` (a retry rewrites the same key); throws StagingMissingError when
   * the folder is not prepared (cleaned up already, or another destination than the one that prepared it).
   */
  stage(folder: string, name: string, content: string, signal?: AbortSignal): Promise<void>;
  /** The staged object's bytes as a stream; StagingMissingError when it is not there. */
  readStaged(key: string): Promise<Readable>;
  /** The names staged in `folder` (no folder: none). */
  listStaged(folder: string): Promise<Set<string>>;
  /** Removes a staging folder and everything in it (idempotent). */
  removeStaging(folder: string): Promise<void>;
  /** Removes the staging folders untouched for `olderThanMs`; returns their names. */
  pruneStaleStaging(olderThanMs: number, now?: number): Promise<string[]>;
  openFinal(key: string): Promise<FinalObjectWriter>;
  /** Writes a small final object whole (no reader sees a part); returns its bytes. */
  writeFinal(key: string, content: string): Promise<number>;
  /** Removes a final object if there is one. */
  removeFinal(key: string): Promise<void>;
  /**
   * The keys of the final objects that start with `prefix` (`acme/` for a folder), sorted; never a staged object
   * or a file still being written.
   */
  listFinal(prefix: string): Promise<string[]>;
  /** A small final object's text (UTF-8), or undefined when there is none at the key. */
  readFinal(key: string): Promise<string | undefined>;
}

/** The staging folder is gone (the export was cleaned up) or was never where this worker looks. */
export class StagingMissingError extends Error {
  override readonly name = 'StagingMissingError';
}

/** Some objects of a removal are still there (the server refused part of a batch): another attempt retries. */
export class StagingCleanupError extends Error {
  override readonly name = 'StagingCleanupError';
}

/**
 * The destination cannot take the export: another attempt cannot fix it (a missing bucket, credentials refused,
 * no permission). The message names the destination and what failed, never a credential.
 */
export class DestinationUnavailableError extends Error {
  override readonly name = 'DestinationUnavailableError';
}
