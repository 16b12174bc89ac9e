import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { VisitorsExportFailureType } from '../../contract/visitors-export-constants';

export function invalidInput(message: string, issues?: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    message,
    type: VisitorsExportFailureType.invalidInput,
    nonRetryable: true,
    ...(issues === undefined ? {} : { details: [issues] }),
  });
}

/** A page the export needs failed for good: names the offset, keeps the service's error as the cause. */
export function pageFailed(offset: number, error: unknown): ApplicationFailure {
  const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  return ApplicationFailure.create({
    message: `visitors page at offset ${offset} failed: ${message}`,
    type: VisitorsExportFailureType.pageFailed,
    nonRetryable: true,
    ...(cause instanceof Error ? { cause } : {}),
  });
}

/** Pages that still contradict each other after `rounds` rounds of re-reads: the export is not final. */
export function pagesDisagree(
  pages: { offset: number; reason: string }[],
  rounds: number,
): ApplicationFailure {
  const offsets = pages.map((page) => page.offset);
  return ApplicationFailure.create({
    message:
      `visitors pages disagree at offset(s) ${offsets.join(', ')} after ${rounds} re-read(s): ` +
      pages.map((page) => page.reason).join('; '),
    type: VisitorsExportFailureType.pagesDisagree,
    nonRetryable: true,
    details: [{ offsets, pages }],
  });
}
