import { S3ServiceException } from '@aws-sdk/client-s3';
import { DestinationUnavailableError } from './destination';

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

/** HEAD answers carry no error code, only the status (a 400 may be a bad checksum: retried). */
const REFUSED_STATUS: Record<number, string> = {
  301: REFUSED.PermanentRedirect ?? '',
  403: 'forbidden: wrong credentials, or the credentials lack permission',
  404: REFUSED.NoSuchBucket ?? '',
};

/** Errors of the SDK's own configuration, before any request: no credentials found, no region. */
const CONFIGURATION = /credential|region is missing/i;

/**
 * A DestinationUnavailableError naming the destination and the reason when `error` cannot be fixed by trying
 * again; undefined for a transient one (5xx, throttling, a reset connection), which the caller retries. The SDK's
 * own message is not passed on: an S3 error body may echo the access key id.
 */
export function refusedDestination(
  error: unknown,
  destination: string,
  operation: string,
  options: { notFoundIsBucket?: boolean } = {},
): DestinationUnavailableError | undefined {
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode;
    const reason =
      REFUSED[error.name] ??
      (status !== undefined && (status !== 404 || options.notFoundIsBucket === true)
        ? REFUSED_STATUS[status]
        : undefined);
    if (reason === undefined) return undefined;
    return new DestinationUnavailableError(
      `export destination ${destination} refused ${operation}: ${reason} (${error.name}, HTTP ${status ?? '?'})`,
    );
  }
  if (
    error instanceof Error &&
    (error.name === 'CredentialsProviderError' || CONFIGURATION.test(error.message))
  ) {
    const reason = /region/i.test(error.message)
      ? 'no region is configured (set AWS_REGION)'
      : 'no AWS credentials were found (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or web identity)';
    return new DestinationUnavailableError(`export destination ${destination}: ${reason}`);
  }
  return undefined;
}

export function isNotFound(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404)
  );
}

/** GetObject of a key that has no object (a missing bucket is NoSuchBucket: a refusal). */
export function isNoSuchKey(error: unknown): boolean {
  return error instanceof S3ServiceException && error.name === 'NoSuchKey';
}
