import { createHash } from 'node:crypto';
import type { VisitorsExportManifest } from '../contract/visitors-export';
import type { ExportDestination } from './destination';
import { exportFileNames, MANIFEST_FILE, TOTALS_FILE } from './layout';

/**
 * Completes an export folder whose export file is already in place: removes the file of another format left
 * (or compression) by an earlier run of the range, then writes totals.json and, last, manifest.json (each whole): a reader that
 * finds the manifest finds the whole export, and its sha256 tells which export file it describes.
 */
export async function finishExportFolder(
  destination: ExportDestination,
  folder: string,
  manifest: VisitorsExportManifest,
): Promise<{ exportFile: string; totalsFile: string; manifestFile: string }> {
  await removeOtherFormats(destination, folder, manifest.file);
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

async function removeOtherFormats(
  destination: ExportDestination,
  folder: string,
  keep: string,
): Promise<void> {
  for (const name of exportFileNames()) {
    if (name !== keep) await destination.removeFinal(`${folder}/${name}`);
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
