import { createHash } from 'node:crypto';
import type { VisitorRow } from '../contract/visitors-export';

/** An object written in pieces, visible at its key only whole, by `commit` (rename, or multipart completion). */
export interface FinalObjectWriter {
  write(chunk: string | Uint8Array): Promise<void>;
  /** Bytes written in all. */
  commit(): Promise<number>;
  abort(): Promise<void>;
}

/**
 * Where exports go: a local directory or an S3 bucket (and prefix), with relative '/'-separated keys
 * (`acme/2026-11-01_2026-11-02/visitors.csv`, `.staging/<export>/chunk-….ndjson`).
 */
export interface ExportDestination {
  /** An absolute directory or `s3://bucket[/prefix]`. */
  readonly root: string;
  /** A key as an absolute path or an `s3://` URI. */
  location(key: string): string;
  /** Takes a write before an export fetches anything; DestinationUnavailableError when it cannot. */
  probe(): Promise<void>;
  /** Makes a staging folder ready (idempotent): pages are staged only into a prepared folder. */
  prepareStaging(folder: string): Promise<void>;
  /** Writes one object whole under `folder/name`; StagingMissingError when the folder is not prepared. */
  stage(folder: string, name: string, content: string, signal?: AbortSignal): Promise<void>;
  removeStaging(folder: string): Promise<void>;
  /** Removes the staging folders untouched for `olderThanMs`; returns their names. */
  pruneStaleStaging(olderThanMs: number, now?: number): Promise<string[]>;
  openFinal(key: string): Promise<FinalObjectWriter>;
  /** Writes a small final object whole. */
  writeFinal(key: string, content: string): Promise<void>;
  removeFinal(key: string): Promise<void>;
  /** Keys of the objects under `prefix`, sorted: never a file being written, nor a staged object outside staging. */
  listFinal(prefix: string): Promise<string[]>;
  /** A small final object's text, or undefined when there is none. */
  readFinal(key: string): Promise<string | undefined>;
}

/** The staging folder is gone (the export was cleaned up) or was never where this worker looks. */
export class StagingMissingError extends Error {
  override readonly name = 'StagingMissingError';
}

/** The destination cannot take the export and another attempt cannot fix it; never names a credential. */
export class DestinationUnavailableError extends Error {
  override readonly name = 'DestinationUnavailableError';
}

/** The export file's bytes on their way to the destination, hashed as they pass (the manifest's sha256). */
export interface HashedOutput {
  write(chunk: Uint8Array): Promise<void>;
  /** sha256 (hex) of every byte written; once, after the last write. */
  sha256(): string;
}

export function hashedOutput(file: FinalObjectWriter): HashedOutput {
  const hash = createHash('sha256');
  return {
    async write(chunk: Uint8Array): Promise<void> {
      hash.update(chunk);
      await file.write(chunk);
    },
    sha256: (): string => hash.digest('hex'),
  };
}

/** Encodes rows as the merge streams them: `add` each row, `drain` between pages, `end` once. */
export interface ExportFileWriter {
  add(row: VisitorRow): void;
  drain(): Promise<void>;
  /** Writes the rest; the caller then commits the file. */
  end(): Promise<void>;
}
