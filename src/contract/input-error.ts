/** The failure type of input that breaks a rule, whichever workflow or update refused it. Non-retryable. */
export const INVALID_INPUT_FAILURE_TYPE = 'InvalidInput';

/** One broken rule: the field (dotted path, or the subject for the whole value) and the rule it breaks. */
export interface InputIssue {
  field: string;
  rule: string;
}

/** Thrown (or wrapped in a non-retryable failure) when input breaks a rule; the message names the field. */
export class InputValidationError extends Error {
  override readonly name = 'InputValidationError';
  constructor(
    readonly issues: readonly InputIssue[],
    subject: string,
  ) {
    super(`Invalid ${subject}: ${issues.map((i) => `${i.field}: ${i.rule}`).join('; ')}`);
  }
}
