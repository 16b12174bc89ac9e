/** Bad command-line arguments: exit code 2, and nothing was started. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const ExitCode = {
  ok: 0,
  /** The operation ran and failed: a failed job or export, a refused follow-up. */
  failed: 1,
  usage: 2,
  notFound: 3,
  /** Temporal could not be reached. */
  unavailable: 4,
} as const;
