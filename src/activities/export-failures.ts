import { ApplicationFailure } from '@temporalio/common';
import { VisitorsExportFailureType } from '../contract/visitors-export';
import { DestinationUnavailableError, StagingMissingError } from '../exports/destination';

/** Maps the destination's expected failures to typed, non-retryable ones; anything else is retried. */
export async function exportFailures<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StagingMissingError) throw stagingMissing(error.message);
    if (error instanceof DestinationUnavailableError) {
      throw ApplicationFailure.create({
        type: VisitorsExportFailureType.destinationUnavailable,
        nonRetryable: true,
        message: error.message,
      });
    }
    throw error;
  }
}

/** Non-retryable: another attempt on the same misconfigured hosts, or after cleanup, cannot find it either. */
export function stagingMissing(message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: VisitorsExportFailureType.stagingMissing,
    nonRetryable: true,
    message,
  });
}
