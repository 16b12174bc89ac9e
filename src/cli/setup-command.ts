import { Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import {
  describeDeployment,
  routeToVersion,
  setUpNamespace,
  type SearchAttributeSetup,
} from '../client/setup';
import { workerBuildId } from '../config';
import { intFromText, intInRange } from '../contract/validation';
import { ExitCode, option, print, text, UsageError, type Run } from './command';

/** `docs-agent setup --help`: the rolling deploy these flags serve (docs/upgrading.md). */
const SETUP_HELP = `
Checks the namespace and registers the search attributes (once per namespace).
With a Worker Deployment Version, shows the deployment; routes new runs to the version only with --set-current
or --ramp. A rolling deploy under Worker Versioning (docs/upgrading.md):
  1. Start the new version's workers: TEMPORAL_DEPLOYMENT_NAME=<name> TEMPORAL_WORKER_BUILD_ID=<new>.
  2. Make it current: docs-agent setup --deployment-name <name> --build-id <new> --set-current
     (or ramp first: --ramp 10, later --set-current).
  3. Watch the old version drain: its pinned runs finish on it.
     temporal worker deployment describe-version --deployment-name <name> --build-id <old>
  4. Stop the old workers once it is drained.

Also read: TEMPORAL_DEPLOYMENT_NAME, TEMPORAL_WORKER_BUILD_ID  the version --deployment-name and --build-id
  default to, as the worker reads them`;

/**
 * The deployment setup reports on, and the version it routes to: from the flags, else from the worker's own
 * environment, so that setup runs with the worker's env file (a name and, from the image's stamp, no build id).
 * A name alone shows the deployment; routing needs the build id.
 */
function versionOf(flags: { deploymentName?: string; buildId?: string; setCurrent?: true; ramp?: number }) {
  const deploymentName = flags.deploymentName ?? process.env.TEMPORAL_DEPLOYMENT_NAME;
  const buildId = flags.buildId ?? workerBuildId(deploymentName, process.env);
  const routing = flags.setCurrent ? '--set-current' : flags.ramp !== undefined ? '--ramp' : undefined;
  if (!deploymentName && (buildId || routing)) {
    throw new UsageError(
      `${routing ?? '--build-id'} needs the Worker Deployment: --deployment-name or TEMPORAL_DEPLOYMENT_NAME`,
    );
  }
  if (routing && !buildId) {
    throw new UsageError(
      `${routing} needs the version's build id: --build-id, or TEMPORAL_WORKER_BUILD_ID (or the image's stamp, DOCS_AGENT_GIT_SHA)`,
    );
  }
  return deploymentName ? { deploymentName, buildId: buildId || undefined } : undefined;
}

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

/** `docs-agent setup` (SETUP_HELP, docs/upgrading.md): idempotent; routes new runs only when asked. */
export function setupCommand(program: CommandUnknownOpts, run: Run): void {
  program
    .command('setup')
    .description('check the namespace, register its search attributes; route new runs to a version')
    .addOption(
      option(
        '--deployment-name <name>',
        'Worker Deployment to report on or route (default TEMPORAL_DEPLOYMENT_NAME)',
        text,
      ),
    )
    .addOption(
      option(
        '--build-id <id>',
        "the version of it, as its workers run it (default TEMPORAL_WORKER_BUILD_ID, or the image's stamp); without one, setup shows the deployment",
        text,
      ),
    )
    .addOption(
      new Option(
        '--set-current',
        'make that version current: new runs start on it, long-lived workflows move to it',
      ).conflicts('ramp'),
    )
    .addOption(
      option(
        '--ramp <percent>',
        'send this percentage (0-100) of new runs to that version instead',
        intFromText(intInRange(0, 100)),
      ),
    )
    .addHelpText('after', SETUP_HELP)
    .action((flags) =>
      run(async ({ client, json }) => {
        const version = versionOf(flags);
        const connected = await client();
        const report = await setUpNamespace(connected);
        if (!report.namespaceFound) {
          print(
            json,
            report,
            `namespace ${report.namespace}: not found. Create it (temporal operator namespace create -n ${report.namespace}, or in Temporal Cloud: tcld namespace create / the Cloud UI), or set TEMPORAL_NAMESPACE; then run setup again`,
          );
          return ExitCode.notFound;
        }
        const namespaceLines = [
          `namespace ${report.namespace}: found`,
          ...report.searchAttributes.map(attributeLine),
          report.ready
            ? `ready: workflows on ${report.namespace} can set ${report.searchAttributes.map((a) => a.name).join(', ')}`
            : 'not ready: finish the steps above, then run setup again',
        ];
        if (!version) {
          print(json, report, namespaceLines.join('\n'));
          return report.ready ? ExitCode.ok : ExitCode.failed;
        }
        const { deploymentName, buildId = '' } = version; // versionOf refused routing without a build id.
        const routing =
          flags.setCurrent || flags.ramp !== undefined
            ? await routeToVersion(connected, { deploymentName, buildId }, flags.ramp)
            : undefined;
        const deployment = await describeDeployment(connected, deploymentName);
        print(
          json,
          { ...report, deployment, ...(routing ? { routing } : {}) },
          [...namespaceLines, ...deploymentLines(version, deployment, routing)].join('\n'),
        );
        return report.ready && routing !== 'missing' ? ExitCode.ok : ExitCode.failed;
      }),
    );
}

function deploymentLines(
  { deploymentName, buildId }: NonNullable<ReturnType<typeof versionOf>>,
  deployment: Awaited<ReturnType<typeof describeDeployment>>,
  routing: Awaited<ReturnType<typeof routeToVersion>> | undefined,
): string[] {
  if (routing === 'missing' || !deployment.found) {
    return [
      `deployment ${deploymentName}: no worker of ${buildId === undefined ? 'it' : `version ${buildId}`} has polled yet: start them (step 1), then run setup again`,
    ];
  }
  const lines = [
    `deployment ${deploymentName}: current ${deployment.current ?? 'none (unversioned workers take new runs)'}${
      deployment.ramping ? `, ramping ${deployment.ramping.buildId} at ${deployment.ramping.percentage}%` : ''
    }`,
    ...deployment.versions.map((v) => `  ${v.buildId}: ${v.status}`),
  ];
  if (buildId !== undefined && deployment.current !== buildId && deployment.ramping?.buildId !== buildId) {
    lines.push(
      `${buildId} takes no new runs: docs-agent setup --set-current (or --ramp <percent>) routes them to it`,
    );
  }
  const draining = deployment.versions.filter((v) => v.status === 'draining').map((v) => v.buildId);
  if (draining.length > 0) {
    lines.push(
      `draining: ${draining.join(', ')}: keep their workers until drained (temporal worker deployment describe-version --deployment-name ${deploymentName} --build-id <id>)`,
    );
  }
  return lines;
}
