import path from 'node:path';
import type { ExportLayout } from '../../src/contract/visitors-export';
import { exportFolderKey, STAGING_FOLDER, stagingFolderKey } from '../../src/exports/layout';

/** Where an export's folder is under a local EXPORT_DIR. */
export function exportDirectory(
  exportDir: string,
  projectId: string,
  dateFrom: string,
  dateTo: string,
  timeZone?: string,
  layout: ExportLayout = 'default',
): string {
  return path.join(exportDir, exportFolderKey(projectId, dateFrom, dateTo, timeZone, layout));
}

/** The staging root under a local EXPORT_DIR. */
export function stagingRoot(exportDir: string): string {
  return path.join(exportDir, STAGING_FOLDER);
}

/** One export's staging folder under a local EXPORT_DIR. */
export function stagingDirectory(exportDir: string, exportKey: string): string {
  return path.join(exportDir, stagingFolderKey(exportKey));
}
