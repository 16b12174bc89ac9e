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

/** `<projectId>/<dateFrom>_<dateTo>`, with `_<zone>` for days of a zone other than UTC (`…_Europe-Paris`). */
export function exportDirectory(
  exportDir: string,
  projectId: string,
  dateFrom: string,
  dateTo: string,
  timeZone?: string,
): string {
  return path.join(
    exportDir,
    fileSafe(projectId),
    `${fileSafe(dateFrom)}_${fileSafe(dateTo)}${fileSafe(zoneSuffix(timeZone))}`,
  );
}

export function exportFileName(format: ExportFormat): string {
  return `visitors.${format}`;
}

export const TOTALS_FILE = 'totals.json';
export const MANIFEST_FILE = 'manifest.json';

/** Staged pages live under EXPORT_DIR so that a shared EXPORT_DIR serves every worker host. */
export function stagingRoot(exportDir: string): string {
  return path.join(exportDir, '.staging');
}

export function stagingDirectory(exportDir: string, exportKey: string): string {
  return path.join(stagingRoot(exportDir), fileSafe(exportKey));
}

export function stagedPagePath(exportDir: string, exportKey: string, offset: number): string {
  return path.join(stagingDirectory(exportDir, exportKey), `page-${String(offset).padStart(12, '0')}.ndjson`);
}
