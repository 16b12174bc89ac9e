import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { ChecksumAlgorithm, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { FinalObjectWriter } from './destination';

/** S3's smallest part; with two parts in flight the merge holds about 15 MB whatever the export's size. */
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

export interface MultipartWriterOptions {
  client: S3Client;
  bucket: string;
  key: string;
  contentType: string;
  checksumAlgorithm: ChecksumAlgorithm;
  /** Maps a failure of the upload (a refusal becomes a non-retryable destination error). */
  refused: (error: unknown) => unknown;
}

/**
 * Streams into a multipart upload (a single PutObject when the whole object fits one part): nothing is visible
 * at the key until CompleteMultipartUpload, which replaces the object whole. Parts of an upload cut short (abort,
 * or a worker killed) stay invisible; `abort` removes them, a bucket lifecycle rule those of a killed worker.
 */
export function openMultipartWriter(options: MultipartWriterOptions): FinalObjectWriter {
  const body = new PassThrough({ highWaterMark: 1024 * 1024 });
  const upload = new Upload({
    client: options.client,
    params: {
      Bucket: options.bucket,
      Key: options.key,
      Body: body,
      ContentType: options.contentType,
      ChecksumAlgorithm: options.checksumAlgorithm,
    },
    partSize: PART_BYTES,
    queueSize: PARTS_IN_FLIGHT,
    leavePartsOnError: false,
  });
  const done = upload.done();
  // Observed here, reported by write/commit: a failed part must not be an unhandled rejection meanwhile.
  done.catch(() => undefined);
  let bytes = 0;
  return {
    async write(chunk) {
      bytes += Buffer.byteLength(chunk);
      if (body.write(chunk)) return;
      // Backpressure: wait for the upload to take the buffered bytes, or for it to fail.
      try {
        await Promise.race([once(body, 'drain'), done]);
      } catch (error) {
        throw options.refused(error);
      }
    },
    async commit() {
      body.end();
      try {
        await done;
      } catch (error) {
        throw options.refused(error);
      }
      return bytes;
    },
    async abort() {
      // A body that fails makes the upload abort its multipart upload on the server (its parts removed) before
      // `done` settles; Upload.abort() would settle `done` at once and abort the server's upload only later.
      body.destroy(new Error('export file aborted'));
      await done.catch(() => undefined);
    },
  };
}
