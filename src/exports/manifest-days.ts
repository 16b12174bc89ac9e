import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseApiDate } from '../contract/api-dates';
import { PARTIAL_SUFFIX } from '../contract/names';
import type { Covered } from '../contract/nightly';
import type { VisitorsExportManifest } from '../contract/visitors-export';
import { EXPORT_LAYOUTS } from '../contract/visitors-export-constants';
import { dayStart } from '../contract/zone-days';
import { inGroupsOf, type ExportDestination } from './destination';
import {
  exportFileNames,
  exportFolderKey,
  MANIFEST_FILE,
  projectFolderKey,
  rangesFolderKey,
  singleDay,
  TOTALS_FILE,
} from './layout';

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
): Promise<string[]> {
  const totals = `${JSON.stringify(manifest.totals, null, 2)}\n`;
  await destination.writeFinal(`${folder}/${TOTALS_FILE}`, totals);
  const complete: VisitorsExportManifest = {
    ...manifest,
    files: [
      ...manifest.files,
      {
        name: TOTALS_FILE,
        rows: 1,
        bytes: Buffer.byteLength(totals),
        sha256: createHash('sha256').update(totals).digest('hex'),
      },
    ],
  };
  await destination.writeFinal(`${folder}/${MANIFEST_FILE}`, `${JSON.stringify(complete, null, 2)}\n`);
  return [manifest.file, TOTALS_FILE, MANIFEST_FILE].map((name) => destination.location(`${folder}/${name}`));
}

/** What telling a whole export takes from a `manifest.json` (VisitorsExportManifest); other fields are not read. */
const manifestSchema = z.object({
  projectId: z.string(),
  range: z.object({ dateFrom: z.string(), dateTo: z.string(), timeZone: z.string().optional() }),
  partial: z.boolean().optional(),
  files: z.array(z.object({ name: z.string() })),
});

const READS_AT_ONCE = 8;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T/;

/**
 * The whole exports of a project at the destination whose folder's first date is in [firstDay, lastDay]: the
 * nightly export's record of done days (docs/nightly.md, "The destination is the record of done days"). Ranges of
 * whole days do not count (a report over days is not the days); a manifest that does not count is skipped with a
 * warning: its instants are due. `covered`: the instants each whole export holds; `olderExports`: a manifest lies
 * in a folder of a day before `firstDay` (not read).
 */
export async function wholeExports(
  destination: ExportDestination,
  projectId: string,
  firstDay: string,
  lastDay: string,
) {
  const folders = [
    ...EXPORT_LAYOUTS.map((layout) => projectFolderKey(projectId, layout)),
    rangesFolderKey(projectId),
  ];
  const listed = new Set<string>();
  const manifests: string[] = [];
  let olderExports = false;
  for (const folder of folders) {
    for (const key of await destination.listFinal(`${folder}/`)) {
      listed.add(key);
      const first = /\d{4}-\d{2}-\d{2}/.exec(key.slice(folder.length))?.[0];
      const manifest =
        key.endsWith(`/${MANIFEST_FILE}`) && !key.endsWith(`${PARTIAL_SUFFIX}/${MANIFEST_FILE}`);
      if (!manifest || first === undefined) continue;
      if (first < firstDay) olderExports = true;
      else if (first <= lastDay) manifests.push(key);
    }
  }
  const covered: Covered[] = [];
  const warnings: string[] = [];
  const texts = await inGroupsOf(manifests, READS_AT_ONCE, (key) => destination.readFinal(key));
  manifests.forEach((key, j) => {
    const text = texts[j];
    // Removed since the listing: nothing there to count.
    if (text === undefined) return;
    const found = spanOf(text, key, projectId, listed);
    if (typeof found !== 'string') covered.push(found);
    else if (found !== '')
      warnings.push(`${destination.location(key)} skipped (${found}): its hours are due`);
  });
  return { covered, olderExports, warnings };
}

/** The instants a manifest shows exported whole; '' for a range of whole days; else why it does not count. */
function spanOf(text: string, key: string, projectId: string, listed: Set<string>): Covered | string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `not a manifest: ${issue?.path.map(String).join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`;
  }
  const { range, partial, files } = parsed.data;
  if (parsed.data.projectId !== projectId) return `of project ${parsed.data.projectId}`;
  if (partial === true) return 'a partial export';
  const folder = key.slice(0, -MANIFEST_FILE.length - 1);
  const folders = EXPORT_LAYOUTS.map((layout) =>
    exportFolderKey(projectId, range.dateFrom, range.dateTo, range.timeZone, layout),
  );
  if (!folders.includes(folder)) return `of ${range.dateFrom} → ${range.dateTo}, not of its folder`;
  const missing = files.find((file) => !listed.has(`${folder}/${file.name}`));
  if (missing !== undefined) return `${missing.name} is missing`;
  if (singleDay(range.dateFrom, range.dateTo) !== undefined) {
    const zone = range.timeZone ?? 'UTC';
    return { from: dayStart(range.dateFrom, zone).instant, to: dayStart(range.dateTo, zone).instant };
  }
  if (!DATE_TIME.test(range.dateFrom) || !DATE_TIME.test(range.dateTo)) return '';
  return { from: parseApiDate(range.dateFrom) ?? NaN, to: parseApiDate(range.dateTo) ?? NaN };
}
