import { setUpNamespace, type SearchAttributeSetup } from '../client/setup';
import type { CommandContext } from './command-context';
import { parseFlags, type FlagSpec } from './flags';
import { print } from './output';
import { ExitCode } from './usage-error';

export const setupSpec: FlagSpec = {};

function attributeLine(a: SearchAttributeSetup): string {
  // KEYWORD as the Temporal CLI and UI spell it: Keyword.
  const type = `${a.type.charAt(0)}${a.type.slice(1).toLowerCase()}`;
  const name = `${a.name} (${type})`;
  switch (a.state) {
    case 'present':
      return `${name}: already registered`;
    case 'added':
      return `${name}: registered now`;
    case 'conflict':
      return `${name}: registered as ${a.registeredAs}, not ${type}: starts that set it are rejected; remove or rename it (e.g. temporal operator search-attribute delete), then run setup again`;
    case 'manual':
      return [
        `${name}: missing, and this server does not let this connection register it. Register it:`,
        ...(a.steps ?? []).map((step) => `    ${step}`),
      ].join('\n');
  }
}

/**
 * `docs-agent setup`: checks the namespace of the connection (TEMPORAL_NAMESPACE) and registers the search
 * attributes the workflows set, where the server allows it; idempotent. Exit 0 when the namespace is ready, 3 when
 * it does not exist, 1 when a step is left to an operator.
 */
export async function setup(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, setupSpec);
  const report = await setUpNamespace(await ctx.client());
  const json = flags.json === true;
  if (!report.namespaceFound) {
    print(
      json,
      report,
      `namespace ${report.namespace}: not found. Create it (temporal operator namespace create -n ${report.namespace}, or in Temporal Cloud: tcld namespace create / the Cloud UI), or set TEMPORAL_NAMESPACE; then run setup again`,
    );
    return ExitCode.notFound;
  }
  print(
    json,
    report,
    [
      `namespace ${report.namespace}: found`,
      ...report.searchAttributes.map(attributeLine),
      report.ready
        ? `ready: workflows on ${report.namespace} can set ${report.searchAttributes.map((a) => a.name).join(', ')}`
        : 'not ready: finish the steps above, then run setup again',
    ].join('\n'),
  );
  return report.ready ? ExitCode.ok : ExitCode.failed;
}
