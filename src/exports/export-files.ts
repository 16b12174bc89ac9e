import { createHash } from 'node:crypto';
import type { VisitorsExportManifest } from '../contract/visitors-export';
import type { ExportDestination } from './destination';
import { exportFileNames, MANIFEST_FILE, TOTALS_FILE } from './layout';

/**
 * Makes way for the export file `keep` before it replaces an earlier run's: removes the manifest first, so that
 * from here until finishExportFolder writes the new one no manifest names a file that is replaced or gone, then
 * the file of another format (or compression).
 */
export async function clearExportFolder(
  destination: ExportDestination,
  folder: string,
  keep: string,
): Promise<void> {
  await destination.removeFinal(`${folder}/${MANIFEST_FILE}`);
  for (const name of exportFileNames()) {
    if (name !== keep) await destination.removeFinal(`${folder}/${name}`);
  }
}

/**
 * Completes an export folder whose export file is in place (after clearExportFolder): writes totals.json and,
 * last, manifest.json (each whole), which lists every file with its sha256: a reader that finds the manifest
 * finds the whole export.
 */
export async function finishExportFolder(
  destination: ExportDestination,
  folder: string,
  manifest: VisitorsExportManifest,
): Promise<{ exportFile: string; totalsFile: string; manifestFile: string }> {
  const totals = `${JSON.stringify(manifest.totals, null, 2)}\n`;
  await destination.writeFinal(`${folder}/${TOTALS_FILE}`, totals);
  const complete: VisitorsExportManifest = {
    ...manifest,
    files: [
      ...manifest.files,
      { name: TOTALS_FILE, rows: 1, bytes: Buffer.byteLength(totals), sha256: sha256(totals) },
    ],
  };
  await destination.writeFinal(`${folder}/${MANIFEST_FILE}`, `${JSON.stringify(complete, null, 2)}\n`);
  return {
    exportFile: destination.location(`${folder}/${manifest.file}`),
    totalsFile: destination.location(`${folder}/${TOTALS_FILE}`),
    manifestFile: destination.location(`${folder}/${MANIFEST_FILE}`),
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
