// The visitors export's constants, free of zod: workflow code imports values only from here (docs/agent-job.md).
import { INVALID_INPUT_FAILURE_TYPE } from './failure-types';

export const EXPORT_FORMATS = ['csv', 'ndjson', 'json', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** EXPORT_LAYOUT (docs/visitors-export.md). Unset: `hive` for Parquet, `default` for the text formats. */
export const EXPORT_LAYOUTS = ['default', 'hive'] as const;
export type ExportLayout = (typeof EXPORT_LAYOUTS)[number];

/** EXPORT_COMPRESSION: `gzip` for CSV and NDJSON files (`visitors.csv.gz`). */
export const EXPORT_COMPRESSIONS = ['none', 'gzip'] as const;
export type ExportCompression = (typeof EXPORT_COMPRESSIONS)[number];

export const DEFAULT_EXPORT_FORMAT: ExportFormat = 'csv';
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
  /** A page the export needs failed for good; `cause` is the service's error. */
  pageFailed: 'VisitorsExportPageFailed',
  /** Pages still disagreed after their re-reads; no manifest is written; message and details name the offsets. */
  pagesDisagree: 'VisitorsExportPagesDisagree',
  /** The staging area is not where a page or the merge looks: EXPORT_DIR is not shared by every host. */
  stagingMissing: 'ExportStagingMissing',
  /** EXPORT_DIR cannot take the export and another attempt cannot fix it; never names a credential. */
  destinationUnavailable: 'ExportDestinationUnavailable',
} as const;
