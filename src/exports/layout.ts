import path from 'node:path';
import { zoneSuffix } from '../contract/names';
import type { ExportFormat } from '../contract/visitors-export';

/**
 * Date-times carry ':' which some file systems refuse, and keys carry '/': both become '-'. '+' is kept so that
 * the offsets +02:00 and -02:00 stay distinct; dates and project ids (letters, digits, '.', '_', '-') pass unchanged.
 */
export function fileSafe(value: string): string {
  return value.replace(/[^A-Za-z0-9._+-]/g, '-');
}

/**
 * `<projectId>/<dateFrom>_<dateTo>`, with `_<zone>` for days of a zone other than UTC (`…_Europe-Paris`): the
 * export's folder relative to the destination, '/'-separated on disk and in a bucket alike.
 */
export function exportFolderKey(
  projectId: string,
  dateFrom: string,
  dateTo: string,
  timeZone?: string,
): string {
  return `${fileSafe(projectId)}/${fileSafe(dateFrom)}_${fileSafe(dateTo)}${fileSafe(zoneSuffix(timeZone))}`;
}

/** The export's folder under a local EXPORT_DIR. */
export function exportDirectory(
  exportDir: string,
  projectId: string,
  dateFrom: string,
  dateTo: string,
  timeZone?: string,
): string {
  return path.join(exportDir, exportFolderKey(projectId, dateFrom, dateTo, timeZone));
}

export function exportFileName(format: ExportFormat): string {
  return `visitors.${format}`;
}

export const TOTALS_FILE = 'totals.json';
export const MANIFEST_FILE = 'manifest.json';

/** Staged pages live under the destination so that every worker host sees them (a shared volume or a bucket). */
export const STAGING_FOLDER = '.staging';

/** `.staging/<exportKey made safe>`: one export attempt's staged pages. */
export function stagingFolderKey(exportKey: string): string {
  return `${STAGING_FOLDER}/${fileSafe(exportKey)}`;
}

const padded = (offset: number): string => String(offset).padStart(12, '0');

/** Zero-padded, so that names sort in offset order. */
export function stagedPageName(offset: number): string {
  return `page-${padded(offset)}.ndjson`;
}

/** The offset a page object's name gives, or undefined for any other name. */
export function parseStagedPageName(name: string): number | undefined {
  const match = /^page-(\d+)\.ndjson$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

/**
 * What a chunk's name says: the block that wrote it (the block's first offset and the activity's attempt, its
 * ordering key among chunks that hold the same page), and the consecutive pages it holds.
 */
export interface StagedChunkName {
  blockOffset: number;
  attempt: number;
  firstOffset: number;
  pages: number;
}

/** `chunk-<blockOffset>-<attempt>-<firstOffset>-<pages>.ndjson`, offsets zero-padded like a page's. */
export function stagedChunkName({ blockOffset, attempt, firstOffset, pages }: StagedChunkName): string {
  return `chunk-${padded(blockOffset)}-${attempt}-${padded(firstOffset)}-${pages}.ndjson`;
}

/** The parts of a chunk's name, or undefined for any other name. */
export function parseStagedChunkName(name: string): StagedChunkName | undefined {
  const match = /^chunk-(\d+)-(\d+)-(\d+)-(\d+)\.ndjson$/.exec(name);
  if (!match) return undefined;
  const [blockOffset, attempt, firstOffset, pages] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
  ];
  return pages > 0 ? { blockOffset, attempt, firstOffset, pages } : undefined;
}

export function stagingRoot(exportDir: string): string {
  return path.join(exportDir, STAGING_FOLDER);
}

export function stagingDirectory(exportDir: string, exportKey: string): string {
  return path.join(exportDir, stagingFolderKey(exportKey));
}

export function stagedPagePath(exportDir: string, exportKey: string, offset: number): string {
  return path.join(stagingDirectory(exportDir, exportKey), stagedPageName(offset));
}
