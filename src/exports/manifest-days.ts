import { z } from 'zod';
import { EXPORT_LAYOUTS } from '../contract/visitors-export-constants';
import { addDays } from '../contract/zone-days';
import type { ExportDestination } from './destination';
import { exportFolderKey, MANIFEST_FILE, projectFolderKey, singleDay } from './layout';

/** What telling a whole day takes from a `manifest.json` (VisitorsExportManifest); other fields are not read. */
const manifestSchema = z.object({
  projectId: z.string(),
  range: z.object({ dateFrom: z.string(), dateTo: z.string(), timeZone: z.string().optional() }),
  partial: z.boolean().optional(),
});

export interface ManifestDaysQuery {
  projectId: string;
  timeZone: string;
  /** Days up to and including this one are not looked for (a watermark); null: from the first. */
  after: string | null;
  /** The last day looked for. */
  through: string;
}

export interface ManifestDays {
  /** The days exported whole, oldest first. */
  days: string[];
  /** One per manifest skipped in a day's folder: it could not be read as the manifest of that whole day. */
  warnings: string[];
}

/** Manifests read at once: a rebuild reads one per day exported. */
const READS_AT_ONCE = 8;

/**
 * The days of `timeZone` that the manifests at the destination show exported whole. A day counts when the
 * manifest in its folder (`default` or `hive` layout) names the project, exactly that day, the zone (absent: UTC)
 * and is not partial. Partial exports live elsewhere (`…_partial`, `partial/`) and are never read. A manifest that
 * is not valid JSON, not a manifest or not of its folder's whole day is skipped with a warning: its day is due.
 */
export async function wholeDaysInManifests(
  destination: ExportDestination,
  query: ManifestDaysQuery,
): Promise<ManifestDays> {
  const candidates: { key: string; day: string }[] = [];
  for (const layout of EXPORT_LAYOUTS) {
    const project = `${projectFolderKey(query.projectId, layout)}/`;
    for (const key of await destination.listFinal(project)) {
      const day = /^(?:day=)?(\d{4}-\d{2}-\d{2})/.exec(key.slice(project.length))?.[1];
      if (day === undefined || day > query.through || (query.after !== null && day <= query.after)) continue;
      const folder = exportFolderKey(query.projectId, day, addDays(day, 1), query.timeZone, layout);
      if (key === `${folder}/${MANIFEST_FILE}`) candidates.push({ key, day });
    }
  }
  const days = new Set<string>();
  const warnings: string[] = [];
  for (let i = 0; i < candidates.length; i += READS_AT_ONCE) {
    const batch = candidates.slice(i, i + READS_AT_ONCE);
    const texts = await Promise.all(batch.map(({ key }) => destination.readFinal(key)));
    batch.forEach(({ key, day }, j) => {
      const text = texts[j];
      // Removed since the listing: no export of the day to count.
      if (text === undefined) return;
      const problem = problemOf(text, query, day);
      if (problem === undefined) days.add(day);
      else warnings.push(`${destination.location(key)} skipped (${problem}): ${day} is due again`);
    });
  }
  return { days: [...days].sort(), warnings };
}

/** Why a manifest does not show `day` of the query's zone exported whole; undefined when it does. */
function problemOf(text: string, query: ManifestDaysQuery, day: string): string | undefined {
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
  const { projectId, range, partial } = parsed.data;
  if (projectId !== query.projectId) return `of project ${projectId}`;
  if (partial === true) return 'a partial export';
  if ((range.timeZone ?? 'UTC') !== query.timeZone) return `of zone ${range.timeZone ?? 'UTC'}`;
  if (singleDay(range.dateFrom, range.dateTo) !== day) return `of ${range.dateFrom} → ${range.dateTo}`;
  return undefined;
}
