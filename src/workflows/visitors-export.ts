// PLACEHOLDER, replaced wholesale by the engineer who owns this workflow.
export async function visitorsExport(_input: unknown): Promise<never> {
  throw new Error('not built yet');
}
