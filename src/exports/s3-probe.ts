import {
  DeleteObjectCommand,
  HeadBucketCommand,
  PutObjectCommand,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import { refusedDestination } from './s3-errors';
import { s3Uri, type S3Location } from './s3-uri';

/** Every put carries a checksum the server verifies before it stores the object. */
export const CHECKSUM = 'CRC32';

/**
 * Head-bucket, then a probe object written at `probeKey` and removed: run before an export fetches any page, so a
 * missing bucket, wrong credentials or a missing permission fail it at once (DestinationUnavailableError naming
 * the bucket, never the credentials). A HEAD's 403 has no error code, so on one the probe write still runs: its
 * refusal tells wrong credentials from a missing permission.
 */
export async function probeS3Destination(
  client: S3Client,
  where: S3Location,
  probeKey: string,
): Promise<void> {
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
