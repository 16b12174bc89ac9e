/** `s3://bucket[/prefix]`: EXPORT_DIR naming S3-compatible object storage instead of a local directory. */
export interface S3Location {
  bucket: string;
  /** Without leading or trailing '/'; '' for the bucket's root. */
  prefix: string;
}

export const S3_URI_RULE =
  'must be s3://bucket[/prefix] with a bucket name of 3-63 lowercase letters, digits, dots and hyphens';

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function isS3Uri(value: string): boolean {
  return value.startsWith('s3://');
}

/** The bucket and prefix of an `s3://` URI, or undefined when it breaks S3_URI_RULE. */
export function parseS3Uri(uri: string): S3Location | undefined {
  if (!isS3Uri(uri)) return undefined;
  const rest = uri.slice('s3://'.length);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const prefix = slash === -1 ? '' : rest.slice(slash + 1).replace(/^\/+|\/+$/g, '');
  if (!BUCKET.test(bucket) || bucket.includes('..')) return undefined;
  if (prefix.split('/').some((part) => part === '.' || part === '..')) return undefined;
  if (prefix.includes('//')) return undefined;
  return { bucket, prefix };
}

export function s3Uri({ bucket, prefix }: S3Location, key = ''): string {
  const path = [prefix, key].filter((part) => part !== '').join('/');
  return path === '' ? `s3://${bucket}` : `s3://${bucket}/${path}`;
}
