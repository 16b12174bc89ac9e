import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { ApplicationFailure } from '@temporalio/common';
import {
  docsApiDetailsOf,
  type DocsApiFailureDetails,
  type DocsApiFailureTypeName,
} from '../../src/contract/failure-types';

/** A failure of the client as a caller reads it: its type, message, retryability and details. */
export interface FailureView extends DocsApiFailureDetails {
  type: DocsApiFailureTypeName;
  message: string;
  retryable: boolean;
}

export function failureView(error: unknown, type?: DocsApiFailureTypeName): FailureView {
  assert.ok(error instanceof ApplicationFailure, `expected an ApplicationFailure, got ${inspect(error)}`);
  if (type !== undefined) assert.equal(error.type, type, error.message);
  const details = docsApiDetailsOf(error.details);
  assert.ok(details, `expected the client's details, got ${inspect(error.details)}`);
  return {
    ...details,
    type: error.type as DocsApiFailureTypeName,
    message: error.message,
    retryable: !error.nonRetryable,
  };
}

/** The failure `promise` rejects with, of `type`. */
export async function rejectsWith(
  promise: Promise<unknown>,
  type: DocsApiFailureTypeName,
): Promise<FailureView> {
  const error = await promise.then(
    () => assert.fail(`expected ${type}, but the call succeeded`),
    (e: unknown) => e,
  );
  return failureView(error, type);
}
