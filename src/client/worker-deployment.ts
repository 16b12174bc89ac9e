import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { grpcStatusOf } from './connect';

/** gRPC codes the server answers for a deployment or version no worker has polled as yet. */
const GRPC_NOT_FOUND = 5;
const GRPC_FAILED_PRECONDITION = 9;

/** inactive (never current), current, ramping, draining (pinned runs still open), drained (safe to stop). */
export type VersionStatus = 'inactive' | 'current' | 'ramping' | 'draining' | 'drained' | 'unknown';

export interface VersionSummary {
  buildId: string;
  status: VersionStatus;
}

export interface DeploymentState {
  deploymentName: string;
  /** False when no worker of the deployment has polled the server yet. */
  found: boolean;
  /** The build id new runs start on; undefined: unversioned workers take them. */
  current: string | undefined;
  ramping: { buildId: string; percentage: number } | undefined;
  versions: VersionSummary[];
}

/** What a routing change did: `missing` when no worker of that version has polled yet (start them first). */
export type RoutingChange = 'changed' | 'missing';

const STATUS_PREFIX = 'WORKER_DEPLOYMENT_VERSION_STATUS_';

function statusOf(
  status: temporal.api.enums.v1.WorkerDeploymentVersionStatus | null | undefined,
): VersionStatus {
  const name = temporal.api.enums.v1.WorkerDeploymentVersionStatus[status ?? 0] ?? '';
  const short = name.replace(STATUS_PREFIX, '').toLowerCase();
  return (
    (['inactive', 'current', 'ramping', 'draining', 'drained'] as const).find((s) => s === short) ?? 'unknown'
  );
}

/** The deployment's routing and each version's status, as `temporal worker deployment describe` shows them. */
export async function describeDeployment(client: Client, deploymentName: string): Promise<DeploymentState> {
  const { namespace } = client.options;
  let info: temporal.api.deployment.v1.IWorkerDeploymentInfo | null | undefined;
  try {
    ({ workerDeploymentInfo: info } = await client.workflowService.describeWorkerDeployment({
      namespace,
      deploymentName,
    }));
  } catch (error) {
    if (grpcStatusOf(error) !== GRPC_NOT_FOUND) throw error;
    return { deploymentName, found: false, current: undefined, ramping: undefined, versions: [] };
  }
  const routing = info?.routingConfig;
  const rampingBuildId = routing?.rampingDeploymentVersion?.buildId ?? undefined;
  return {
    deploymentName,
    found: true,
    current: routing?.currentDeploymentVersion?.buildId ?? undefined,
    ramping: rampingBuildId
      ? { buildId: rampingBuildId, percentage: routing?.rampingVersionPercentage ?? 0 }
      : undefined,
    versions: (info?.versionSummaries ?? []).map((summary) => ({
      buildId: summary.deploymentVersion?.buildId ?? '',
      status: statusOf(summary.status),
    })),
  };
}

/** Sends every new run (and every long-lived workflow at its next continue-as-new) to `version`. */
export function setCurrentVersion(client: Client, version: WorkerDeploymentVersion): Promise<RoutingChange> {
  return routingChange(client, version, () =>
    client.workflowService.setWorkerDeploymentCurrentVersion({
      namespace: client.options.namespace,
      deploymentName: version.deploymentName,
      buildId: version.buildId,
      identity: client.options.identity,
    }),
  );
}

/** Sends `percentage` (0-100) of new runs to `version`, the rest to the current one. */
export function rampToVersion(
  client: Client,
  version: WorkerDeploymentVersion,
  percentage: number,
): Promise<RoutingChange> {
  return routingChange(client, version, () =>
    client.workflowService.setWorkerDeploymentRampingVersion({
      namespace: client.options.namespace,
      deploymentName: version.deploymentName,
      buildId: version.buildId,
      percentage,
      identity: client.options.identity,
    }),
  );
}

/**
 * A version shows in its deployment as soon as a worker polls, a moment before the server has registered its task
 * queues; a routing change in that moment is refused as if the version were missing. So a refusal for a version the
 * deployment lists is asked again for up to REGISTRATION_SETTLE_MS; one the deployment does not list is missing.
 */
const REGISTRATION_SETTLE_MS = 15_000;
const REGISTRATION_RETRY_MS = 250;

async function routingChange(
  client: Client,
  version: WorkerDeploymentVersion,
  change: () => Promise<unknown>,
): Promise<RoutingChange> {
  const deadline = Date.now() + REGISTRATION_SETTLE_MS;
  for (;;) {
    try {
      await change();
      return 'changed';
    } catch (error) {
      const code = grpcStatusOf(error);
      if (code !== GRPC_NOT_FOUND && code !== GRPC_FAILED_PRECONDITION) throw error;
      const listed = (await describeDeployment(client, version.deploymentName)).versions.some(
        (v) => v.buildId === version.buildId,
      );
      if (!listed || Date.now() >= deadline) return 'missing';
      await sleep(REGISTRATION_RETRY_MS);
    }
  }
}
