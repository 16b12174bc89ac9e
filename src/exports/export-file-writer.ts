import { createHash } from 'node:crypto';
import type { VisitorRow } from '../contract/visitors-export';
import type { FinalObjectWriter } from './destination';

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

/**
 * Encodes rows into an export file as the merge streams them: `add` each row (synchronously, kept in memory),
 * `drain` between pages (writes what has gathered once it is worth a write), `end` once.
 */
export interface ExportFileWriter {
  add(row: VisitorRow): void;
  drain(): Promise<void>;
  /** Writes the rest; the caller then commits the file. */
  end(): Promise<void>;
}
