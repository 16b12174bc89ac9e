import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { PutObjectCommandInput, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { FinalObjectWriter } from './destination';

/** S3's smallest part; with two parts in flight the merge holds about 15 MB whatever the export's size. */
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/**
 * Streams into a multipart upload (a single PutObject when the whole object fits one part): nothing is visible
 * at the key until CompleteMultipartUpload, which replaces the object whole. Parts of an upload cut short (abort,
 * or a worker killed) stay invisible; `abort` removes them, a bucket lifecycle rule those of a killed worker.
 * `refused` maps a failure of the upload (a refusal becomes a non-retryable destination error).
 */
export function openMultipartWriter(
  client: S3Client,
  params: Omit<PutObjectCommandInput, 'Body'>,
  refused: (error: unknown) => unknown,
): FinalObjectWriter {
  const body = new PassThrough({ highWaterMark: 1024 * 1024 });
  const upload = new Upload({
    client,
    params: { ...params, Body: body },
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
