// The visitors export's constants, free of zod: workflow code imports values only from here (types from
// ./visitors-export with `import type`), so zod is never evaluated in the workflow sandbox (docs/agent-job.md).
import { INVALID_INPUT_FAILURE_TYPE } from './input-error';

export const EXPORT_FORMATS = ['csv', 'ndjson', 'json', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * EXPORT_LAYOUT: `default` (`<projectId>/<from>_<to>[_<Zone>]/`) or `hive` (`project=<id>/day=<date>/`, …), the
 * folders query engines take partitions from. Unset: `hive` for Parquet, `default` for the text formats.
 */
export const EXPORT_LAYOUTS = ['default', 'hive'] as const;
export type ExportLayout = (typeof EXPORT_LAYOUTS)[number];

/** EXPORT_COMPRESSION: `gzip` compresses CSV and NDJSON files (`visitors.csv.gz`); Parquet compresses itself. */
export const EXPORT_COMPRESSIONS = ['none', 'gzip'] as const;
export type ExportCompression = (typeof EXPORT_COMPRESSIONS)[number];

export const DEFAULT_PAGE_SIZE = 250;
export const MAX_PAGE_SIZE = 250;
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 16;
/** How long an export may wait for the analytics budget in all, from its first run. */
export const DEFAULT_EXPORT_DEADLINE = '24h';

/** Failure types the workflow ends with (ApplicationFailure.type), for callers that match on them. */
export const VisitorsExportFailureType = {
  /** A field of the input breaks a rule; nothing was requested. Non-retryable. */
  invalidInput: INVALID_INPUT_FAILURE_TYPE,
  /** A page the export needs failed for good (a 4xx, or retries exhausted); `cause` is the service's error. */
  pageFailed: 'VisitorsExportPageFailed',
  /**
   * Pages still contradicted each other after their re-reads (docs/visitors-export.md): no manifest is written;
   * the message and details name the offsets.
   */
  pagesDisagree: 'VisitorsExportPagesDisagree',
  /** A page or the merge could not find the export's staging area: EXPORT_DIR is not shared by every host. */
  stagingMissing: 'ExportStagingMissing',
  /**
   * EXPORT_DIR cannot take the export (a missing bucket, credentials refused, no permission, a directory that
   * cannot be written): found before any page is fetched or any budget spent. Non-retryable; the message names
   * the destination, never a credential.
   */
  destinationUnavailable: 'ExportDestinationUnavailable',
} as const;
