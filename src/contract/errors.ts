import { FollowUpFailureType } from './agent-job-constants';

/**
 * The errors the worker, the CLI and the typed client throw themselves. Each `name` is a type of the contract, so
 * a caller matches one vocabulary whether a failure came from a workflow (ApplicationFailure `type`) or from here.
 */

/** A setting (an environment variable, or a client option read as one) breaks its rule; the message names it. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * The code broke a rule of its own: a bug, never the caller's doing. Thrown in workflow code it fails the workflow
 * task, not the run, so a deployment with the fix resumes the run where it stopped.
 */
export class InvariantError extends Error {
  override readonly name = 'InvariantError';
}

/**
 * The typed client did not deliver a follow-up, and nothing was sent to the service: the job is failed or
 * archived, the run closed before any job existed, or it closed while the follow-up arrived. Its name is the
 * workflow's own refusal's type (FollowUpNotAccepted): `followUpFailureOf` reads both alike.
 */
export class FollowUpNotAcceptedError extends Error {
  override readonly name = FollowUpFailureType.notAccepted;
  constructor(
    message: string,
    readonly workflowId: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
