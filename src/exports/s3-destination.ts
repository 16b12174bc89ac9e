import { randomBytes } from 'node:crypto';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import {
  DestinationUnavailableError,
  StagingMissingError,
  type ExportDestination,
  type FinalObjectWriter,
} from './destination';
import { ConfigError } from '../contract/errors';
import { isStagingKey, STAGING_FOLDER } from './layout';
import { LocalDestination } from './local-destination';
import { isNoSuchKey, isNotFound, refusedDestination } from './s3-errors';
import { openMultipartWriter } from './s3-multipart';
import { isS3Uri, parseS3Uri, s3Uri, S3_URI_RULE, type S3Location } from './s3-uri';

export interface S3DestinationOptions {
  /** EXPORT_S3_FORCE_PATH_STYLE: `http://host/bucket/key` addressing (MinIO, most self-hosted servers). */
  forcePathStyle?: boolean;
  /**
   * Beyond what the SDK reads from the standard AWS environment and files (region, credentials, profile, web
   * identity, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL): tests and benchmarks name their server here.
   */
  clientConfig?: S3ClientConfig;
}

/** EXPORT_DIR as a destination: `s3://bucket[/prefix]` is object storage, anything else a local directory. */
export function openExportDestination(exportDir: string, s3: S3DestinationOptions = {}): ExportDestination {
  if (!isS3Uri(exportDir)) return new LocalDestination(exportDir);
  const where = parseS3Uri(exportDir);
  if (!where) throw new ConfigError(`EXPORT_DIR ${S3_URI_RULE} (got "${exportDir.slice(0, 80)}")`);
  return new S3Destination(where, s3);
}

/** Every put carries a checksum the server verifies before it stores the object. */
const CHECKSUM = 'CRC32';
/** Written by prepareStaging: a page is staged only beside it (see stage). */
const PREPARED_MARKER = '.prepared';

/**
 * An S3 bucket and prefix (EXPORT_DIR `s3://bucket[/prefix]`). PutObject and a completed multipart upload make
 * an object visible whole or not at all, so no reader sees a part at a final key, and a retry rewrites the key.
 */
export class S3Destination implements ExportDestination {
  readonly root: string;
  readonly client: S3Client;

  constructor(
    private readonly where: S3Location,
    options: S3DestinationOptions = {},
  ) {
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

  /** Fails with DestinationUnavailableError, naming the bucket, when this worker cannot write here. */
  probe(): Promise<void> {
    return probeS3Destination(
      this.client,
      this.where,
      this.key(`${STAGING_FOLDER}/.probe-${randomBytes(6).toString('hex')}`),
    );
  }

  async prepareStaging(folder: string): Promise<void> {
    await this.put(`${folder}/${PREPARED_MARKER}`, '');
  }

  async stage(folder: string, name: string, content: string, signal?: AbortSignal): Promise<void> {
    // Like a local page that never creates its directory: a page finishing after its export was cleaned up
    // fails instead of leaving a stray object. The marker's check and the put go together (one round trip of
    // latency, not two); a page put beside no marker is deleted again.
    const options = signal ? { abortSignal: signal } : {};
    const marker = this.client
      .send(
        new HeadObjectCommand({ Bucket: this.where.bucket, Key: this.key(`${folder}/${PREPARED_MARKER}`) }),
        options,
      )
      .then(
        () => true,
        (error: unknown) => {
          if (isNotFound(error)) return false;
          throw this.refused(error, 'HeadObject');
        },
      );
    const [prepared] = await Promise.all([marker, this.put(`${folder}/${name}`, content, signal)]);
    if (prepared) return;
    await this.removeFinal(`${folder}/${name}`);
    throw new StagingMissingError(
      `staging folder ${this.location(folder)} is not prepared: the export was cleaned up, or this worker's ` +
        'EXPORT_DIR is not the destination that prepared it',
    );
  }

  async removeStaging(folder: string): Promise<void> {
    // The marker first: a page still in flight then fails rather than staging into a folder being removed.
    await this.removeFinal(`${folder}/${PREPARED_MARKER}`);
    const root = this.key('').length;
    const keys: string[] = [];
    for await (const { Key } of this.objects(`${this.key(folder)}/`)) keys.push(Key.slice(root));
    await Promise.all(keys.map((key) => this.removeFinal(key)));
  }

  /** Staging folders whose marker (rewritten by every run of the export) is older than the limit, or gone. */
  async pruneStaleStaging(olderThanMs: number, now = Date.now()): Promise<string[]> {
    const root = `${this.key(STAGING_FOLDER)}/`;
    const touched = new Map<string, number>();
    for await (const { Key, LastModified } of this.objects(root)) {
      const [name = '', rest] = Key.slice(root.length).split('/', 2);
      const marked = rest === PREPARED_MARKER ? (LastModified?.getTime() ?? now) : 0;
      touched.set(name, Math.max(touched.get(name) ?? 0, marked));
    }
    const stale = [...touched].filter(([, at]) => now - at > olderThanMs).map(([name]) => name);
    for (const name of stale) await this.removeStaging(`${STAGING_FOLDER}/${name}`);
    return stale;
  }

  openFinal(key: string): Promise<FinalObjectWriter> {
    const params = { Bucket: this.where.bucket, Key: this.key(key), ContentType: contentTypeOf(key) };
    const refused = (error: unknown) => this.refused(error, 'multipart upload');
    return Promise.resolve(
      openMultipartWriter(this.client, { ...params, ChecksumAlgorithm: CHECKSUM }, refused),
    );
  }

  writeFinal(key: string, content: string): Promise<void> {
    return this.put(key, content);
  }

  async removeFinal(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.where.bucket, Key: this.key(key) }));
    } catch (error) {
      if (!isNotFound(error)) throw this.refused(error, 'DeleteObject');
    }
  }

  async listFinal(prefix: string): Promise<string[]> {
    const root = this.key('').length;
    const keys: string[] = [];
    for await (const { Key } of this.objects(this.key(prefix))) {
      const key = Key.slice(root);
      if (!isStagingKey(key) || isStagingKey(prefix)) keys.push(key);
    }
    return keys.sort();
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

  private async put(key: string, content: string, signal?: AbortSignal): Promise<void> {
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

  private async *objects(prefix: string): AsyncGenerator<{ Key: string; LastModified?: Date | undefined }> {
    let token: string | undefined;
    do {
      let page;
      try {
        const input = { Bucket: this.where.bucket, Prefix: prefix, ContinuationToken: token };
        page = await this.client.send(new ListObjectsV2Command(input));
      } catch (error) {
        throw this.refused(error, 'ListObjectsV2');
      }
      for (const { Key, LastModified } of page.Contents ?? [])
        if (Key !== undefined) yield { Key, LastModified };
      token = page.NextContinuationToken;
    } while (token);
  }

  /** A refusal another attempt cannot fix becomes DestinationUnavailableError; anything else is left as is. */
  private refused(error: unknown, operation: string): unknown {
    if (error instanceof DestinationUnavailableError || error instanceof StagingMissingError) return error;
    return refusedDestination(error, this.root, operation) ?? error;
  }
}

function contentTypeOf(key: string): string {
  if (key.endsWith('.csv')) return 'text/csv; charset=utf-8';
  if (key.endsWith('.ndjson')) return 'application/x-ndjson';
  if (key.endsWith('.json')) return 'application/json';
  return 'application/octet-stream';
}

/**
 * Head-bucket, then a probe object written at `probeKey` and removed: run before an export fetches any page, so a
 * missing bucket, wrong credentials or a missing permission fail it at once (DestinationUnavailableError naming
 * the bucket, never the credentials). A HEAD's 403 has no error code, so on one the probe write still runs: its
 * refusal tells wrong credentials from a missing permission.
 */
async function probeS3Destination(client: S3Client, where: S3Location, probeKey: string): Promise<void> {
  const root = s3Uri(where);
  const refusing = async (operation: string, send: () => Promise<unknown>): Promise<void> => {
    try {
      await send();
    } catch (error) {
      throw refusedDestination(error, root, operation) ?? error;
    }
  };
  let headRefusal: Error | undefined;
  try {
    await client.send(new HeadBucketCommand({ Bucket: where.bucket }));
  } catch (error) {
    const refusal = refusedDestination(error, root, 'HeadBucket', { notFoundIsBucket: true });
    if (!refusal) throw error;
    if (!(error instanceof S3ServiceException) || error.$metadata.httpStatusCode !== 403) throw refusal;
    headRefusal = refusal;
  }
  await refusing('PutObject (probe write)', () =>
    client.send(
      new PutObjectCommand({ Bucket: where.bucket, Key: probeKey, Body: '', ChecksumAlgorithm: CHECKSUM }),
    ),
  );
  await refusing('DeleteObject (probe delete)', () =>
    client.send(new DeleteObjectCommand({ Bucket: where.bucket, Key: probeKey })),
  );
  if (headRefusal) throw headRefusal;
}
