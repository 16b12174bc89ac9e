import { PARTIAL_SUFFIX, zoneSuffix } from '../contract/names';
import {
  EXPORT_COMPRESSIONS,
  EXPORT_FORMATS,
  type ExportCompression,
  type ExportFormat,
  type ExportLayout,
} from '../contract/visitors-export-constants';
import { addDays, isDay } from '../contract/zone-days';

/**
 * Date-times carry ':' which some file systems refuse, and keys carry '/': both become '-'. '+' is kept so that
 * the offsets +02:00 and -02:00 stay distinct; dates and project ids (letters, digits, '.', '_', '-') pass unchanged.
 */
export function fileSafe(value: string): string {
  return value.replace(/[^A-Za-z0-9._+-]/g, '-');
}

/**
 * The export's folder relative to the destination, '/'-separated on disk and in a bucket alike (docs/visitors-export.md,
 * "Output"). A partial export is never where a whole one goes: a query over the dataset's folders never reads it.
 */
export function exportFolderKey(
  projectId: string,
  dateFrom: string,
  dateTo: string,
  timeZone?: string,
  layout: ExportLayout = 'default',
  partial = false,
): string {
  const zone = fileSafe(zoneSuffix(timeZone));
  const project = projectFolderKey(projectId, layout);
  if (layout === 'default') {
    const suffix = partial ? PARTIAL_SUFFIX : '';
    return `${project}/${fileSafe(dateFrom)}_${fileSafe(dateTo)}${zone}${suffix}`;
  }
  const day = singleDay(dateFrom, dateTo);
  const dates =
    day === undefined
      ? `${rangesFolderKey(projectId)}/from=${fileSafe(dateFrom)}/to=${fileSafe(dateTo)}`
      : `${project}/day=${day}`;
  const folder = `${dates}${zone === '' ? '' : `/zone=${zone.slice(1)}`}`;
  return partial ? `partial/${folder}` : folder;
}

export function projectFolderKey(projectId: string, layout: ExportLayout): string {
  return layout === 'default' ? fileSafe(projectId) : `project=${fileSafe(projectId)}`;
}

/**
 * Where a project's range exports go in `hive`: `ranges/project=<id>`, a root of their own, so that a query over
 * the days (`project=<id>/day=<day>`) never meets a `from=`/`to=` folder (engines refuse partitions that differ).
 */
export function rangesFolderKey(projectId: string): string {
  return `ranges/${projectFolderKey(projectId, 'hive')}`;
}

export function layoutFor(format: ExportFormat, configured?: ExportLayout): ExportLayout {
  return configured ?? (format === 'parquet' ? 'hive' : 'default');
}

/** EXPORT_COMPRESSION applies to CSV and NDJSON; JSON is written plain and Parquet compresses its pages. */
export function compressionFor(
  format: ExportFormat,
  configured: ExportCompression = 'none',
): ExportCompression {
  return format === 'csv' || format === 'ndjson' ? configured : 'none';
}

export function exportFileName(format: ExportFormat, compression: ExportCompression = 'none'): string {
  return `visitors.${format}${compression === 'gzip' ? '.gz' : ''}`;
}

export function exportFileNames(): string[] {
  return EXPORT_FORMATS.flatMap((format) =>
    EXPORT_COMPRESSIONS.filter((compression) => compressionFor(format, compression) === compression).map(
      (compression) => exportFileName(format, compression),
    ),
  );
}

/** The day a one-day export covers (`dateFrom` and `dateTo` days, `dateTo` the next), else undefined. */
export function singleDay(dateFrom: string, dateTo: string): string | undefined {
  return isDay(dateFrom) && isDay(dateTo) && addDays(dateFrom, 1) === dateTo ? dateFrom : undefined;
}

export const TOTALS_FILE = 'totals.json';
export const MANIFEST_FILE = 'manifest.json';

/** Staged pages live under the destination so that every worker host sees them (a shared volume or a bucket). */
export const STAGING_FOLDER = '.staging';

export function isStagingKey(key: string): boolean {
  return key === STAGING_FOLDER || key.startsWith(`${STAGING_FOLDER}/`);
}

export function stagingFolderKey(exportKey: string): string {
  return `${STAGING_FOLDER}/${fileSafe(exportKey)}`;
}

const padded = (offset: number): string => String(offset).padStart(12, '0');

/**
 * What a chunk's name says: the page run that wrote it (the run's first offset and the workflow's attempt at that
 * offset: its ordering key among chunks that hold the same page, see resolveStagedPages), and the consecutive
 * pages it holds.
 */
export interface StagedChunkName {
  runOffset: number;
  attempt: number;
  firstOffset: number;
  pages: number;
}

/** `chunk-<runOffset>-<attempt>-<firstOffset>-<pages>.ndjson`, offsets zero-padded so names sort in offset order. */
export function stagedChunkName({ runOffset, attempt, firstOffset, pages }: StagedChunkName): string {
  return `chunk-${padded(runOffset)}-${attempt}-${padded(firstOffset)}-${pages}.ndjson`;
}

export function parseStagedChunkName(name: string): StagedChunkName | undefined {
  const match = /^chunk-(\d+)-(\d+)-(\d+)-(\d+)\.ndjson$/.exec(name);
  if (!match) return undefined;
  const [runOffset, attempt, firstOffset, pages] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
  ];
  return pages > 0 ? { runOffset, attempt, firstOffset, pages } : undefined;
}
