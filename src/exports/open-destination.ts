import { ConfigError } from '../contract/errors';
import type { ExportDestination } from './destination';
import { LocalDestination } from './local-destination';
import { S3Destination, type S3DestinationOptions } from './s3-destination';
import { isS3Uri, parseS3Uri, S3_URI_RULE } from './s3-uri';

/** EXPORT_DIR as a destination: `s3://bucket[/prefix]` is object storage, anything else a local directory. */
export function openExportDestination(exportDir: string, s3: S3DestinationOptions = {}): ExportDestination {
  if (!isS3Uri(exportDir)) return new LocalDestination(exportDir);
  const where = parseS3Uri(exportDir);
  if (!where) throw new ConfigError(`EXPORT_DIR ${S3_URI_RULE} (got "${exportDir.slice(0, 80)}")`);
  return new S3Destination(where, s3);
}
