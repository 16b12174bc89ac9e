import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { ApplicationFailure } from '@temporalio/common';
import {
  destinationUnavailable,
  ExportDestination,
  isPermanent,
  type FinalObjectWriter,
  type StoredObject,
} from './destination';
import { ConfigError } from '../contract/errors';
import { LocalDestination } from './local-destination';
import { isS3Uri, parseS3Uri, s3Uri, S3_URI_RULE, type S3Location } from './s3-uri';

export interface S3DestinationOptions {
  /** EXPORT_S3_FORCE_PATH_STYLE: `http://host/bucket/key` addressing (MinIO, most self-hosted servers). */
  forcePathStyle?: boolean;
  /** Beyond what the SDK reads from the standard AWS environment and files: tests and benchmarks name their server. */
  clientConfig?: S3ClientConfig;
}

export function openExportDestination(exportDir: string, s3: S3DestinationOptions = {}): ExportDestination {
  if (!isS3Uri(exportDir)) return new LocalDestination(exportDir);
  const where = parseS3Uri(exportDir);
  if (!where) throw new ConfigError(`EXPORT_DIR ${S3_URI_RULE} (got "${exportDir.slice(0, 80)}")`);
  return new S3Destination(where, s3);
}

/** Every put carries a checksum the server verifies before it stores the object. */
const CHECKSUM = 'CRC32';

/** An S3 bucket and prefix: PutObject and a completed multipart upload make an object visible whole or not at all. */
export class S3Destination extends ExportDestination {
  readonly root: string;
  readonly client: S3Client;

  constructor(
    private readonly where: S3Location,
    options: S3DestinationOptions = {},
  ) {
    super();
    this.root = s3Uri(where);
    this.client = new S3Client({
      forcePathStyle: options.forcePathStyle ?? false,
      // A dead connection fails the request (and the SDK retries it) instead of hanging the activity.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 120_000 },
      ...options.clientConfig,
    });
  }

  location(key: string): string {
    return s3Uri(this.where, key);
  }

  private key(key: string): string {
    return this.where.prefix === '' ? key : `${this.where.prefix}/${key}`;
  }

  /**
   * Streams into a multipart upload (a single PutObject when the whole object fits one part): nothing is visible
   * at the key until CompleteMultipartUpload, which replaces the object whole. Parts of an upload cut short stay
   * invisible; `abort` removes them, a bucket lifecycle rule those of a killed worker.
   */
  openFinal(key: string): Promise<FinalObjectWriter> {
    const refused = (error: unknown) => this.refused(error, 'multipart upload');
    const body = new PassThrough({ highWaterMark: 1024 * 1024 });
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.where.bucket,
        Key: this.key(key),
        ContentType: contentTypeOf(key),
        ChecksumAlgorithm: CHECKSUM,
        Body: body,
      },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    const done = upload.done();
    // Observed here, reported by write/commit: a failed part must not be an unhandled rejection meanwhile.
    done.catch(() => undefined);
    return Promise.resolve({
      async write(chunk) {
        if (body.write(chunk)) return;
        // Backpressure: wait for the upload to take the buffered bytes, or for it to fail.
        try {
          await Promise.race([once(body, 'drain'), done]);
        } catch (error) {
          throw refused(error);
        }
      },
      async commit() {
        body.end();
        try {
          await done;
        } catch (error) {
          throw refused(error);
        }
      },
      async abort() {
        // A body that fails makes the upload abort its multipart upload on the server (its parts removed) before
        // `done` settles; Upload.abort() would settle `done` at once and abort the server's upload only later.
        body.destroy(new Error('export file aborted'));
        await done.catch(() => undefined);
      },
    });
  }

  async removeFinal(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.where.bucket, Key: this.key(key) }));
    } catch (error) {
      if (!isNoSuchKey(error)) throw this.refused(error, 'DeleteObject');
    }
  }

  protected async listObjects(prefix: string): Promise<StoredObject[]> {
    const root = this.key('').length;
    const objects: StoredObject[] = [];
    let token: string | undefined;
    do {
      let page;
      try {
        const input = { Bucket: this.where.bucket, Prefix: this.key(prefix), ContinuationToken: token };
        page = await this.client.send(new ListObjectsV2Command(input));
      } catch (error) {
        throw this.refused(error, 'ListObjectsV2');
      }
      for (const { Key, LastModified } of page.Contents ?? []) {
        if (Key !== undefined)
          objects.push({ key: Key.slice(root), modifiedMs: LastModified?.getTime() ?? 0 });
      }
      token = page.NextContinuationToken;
    } while (token);
    return objects;
  }

  async readFinal(key: string): Promise<string | undefined> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.where.bucket, Key: this.key(key) }),
      );
      return (await answer.Body?.transformToString('utf8')) ?? '';
    } catch (error) {
      if (isNoSuchKey(error)) return undefined;
      throw this.refused(error, 'GetObject');
    }
  }

  async writeFinal(key: string, content: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.where.bucket,
          Key: this.key(key),
          Body: content,
          ContentLength: Buffer.byteLength(content),
          ContentType: contentTypeOf(key),
          ChecksumAlgorithm: CHECKSUM,
        }),
        signal ? { abortSignal: signal } : {},
      );
    } catch (error) {
      throw this.refused(error, 'PutObject');
    }
  }

  /** A refusal another attempt cannot fix becomes destinationUnavailable; anything else is left as is. */
  private refused(error: unknown, operation: string): unknown {
    if (isPermanent(error)) return error;
    return refusedDestination(error, this.root, operation) ?? error;
  }
}

function contentTypeOf(key: string): string {
  if (key.endsWith('.csv')) return 'text/csv; charset=utf-8';
  if (key.endsWith('.ndjson')) return 'application/x-ndjson';
  if (key.endsWith('.json')) return 'application/json';
  return 'application/octet-stream';
}

/** S3's smallest part; with two parts in flight the merge holds about 15 MB whatever the export's size. */
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/** S3 error codes that another attempt cannot fix: the credentials, the permission or the bucket itself. */
const REFUSED: Record<string, string> = {
  AccessDenied: 'access denied: the credentials lack permission',
  AllAccessDisabled: 'all access to the bucket is disabled',
  InvalidAccessKeyId: 'the access key id is not known to the server (wrong credentials)',
  SignatureDoesNotMatch: 'the request signature does not match (wrong secret key)',
  InvalidToken: 'the session token is invalid',
  ExpiredToken: 'the session token has expired',
  InvalidBucketName: 'the bucket name is invalid',
  NoSuchBucket: 'the bucket does not exist',
  PermanentRedirect: 'the bucket is in another region than AWS_REGION',
  AuthorizationHeaderMalformed: 'the request was signed for another region than the bucket is in',
};

/** Errors of the SDK's own configuration, before any request: no credentials found, no region. */
const CONFIGURATION = /credential|region is missing/i;

/**
 * A destinationUnavailable failure naming the destination and the reason when `error` cannot be fixed by trying
 * again; undefined for a transient one (5xx, throttling, a reset connection), which the caller retries. The SDK's
 * own message is not passed on: an S3 error body may echo the access key id.
 */
function refusedDestination(
  error: unknown,
  destination: string,
  operation: string,
): ApplicationFailure | undefined {
  if (error instanceof S3ServiceException) {
    const reason = REFUSED[error.name];
    if (reason === undefined) return undefined;
    const status = error.$metadata.httpStatusCode ?? '?';
    return destinationUnavailable(
      `export destination ${destination} refused ${operation}: ${reason} (${error.name}, HTTP ${status})`,
    );
  }
  if (
    error instanceof Error &&
    (error.name === 'CredentialsProviderError' || CONFIGURATION.test(error.message))
  ) {
    const reason = /region/i.test(error.message)
      ? 'no region is configured (set AWS_REGION)'
      : 'no AWS credentials were found (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or web identity)';
    return destinationUnavailable(`export destination ${destination}: ${reason}`);
  }
  return undefined;
}

/** A key that has no object (a missing bucket is NoSuchBucket: a refusal). */
function isNoSuchKey(error: unknown): boolean {
  return error instanceof S3ServiceException && error.name === 'NoSuchKey';
}
