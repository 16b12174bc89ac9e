import fs from 'node:fs/promises';
import path from 'node:path';
import { EXPORT_FORMATS, type ExportFormat, type VisitorsExportManifest } from '../contract/visitors-export';
import { writeFileAtomic } from './atomic-file';
import { exportFileName, MANIFEST_FILE, TOTALS_FILE } from './layout';

/**
 * Completes an export directory whose export file is already in place: removes the file of another format left
 * by an earlier run of the range, then writes totals.json and, last, manifest.json (each atomically): a reader
 * that checks the export file against the manifest's sha256 sees either the old or the new export, whole.
 */
export async function finishExportDirectory(
  directory: string,
  manifest: VisitorsExportManifest,
): Promise<{ exportFile: string; totalsFile: string; manifestFile: string }> {
  await removeOtherFormats(directory, manifest.format);
  const totalsFile = path.join(directory, TOTALS_FILE);
  await writeFileAtomic(totalsFile, `${JSON.stringify(manifest.totals, null, 2)}\n`);
  const manifestFile = path.join(directory, MANIFEST_FILE);
  await writeFileAtomic(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  return { exportFile: path.join(directory, manifest.file), totalsFile, manifestFile };
}

async function removeOtherFormats(directory: string, keep: ExportFormat): Promise<void> {
  for (const format of EXPORT_FORMATS) {
    if (format !== keep) await fs.rm(path.join(directory, exportFileName(format)), { force: true });
  }
}
