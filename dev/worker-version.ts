import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { describeDeployment, routeToVersion } from '../src/client/setup';

/** The version a worker environment joins (TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID), if any. */
export function versionOfEnv(env: Record<string, string>): WorkerDeploymentVersion | undefined {
  const { TEMPORAL_DEPLOYMENT_NAME: deploymentName, TEMPORAL_WORKER_BUILD_ID: buildId } = env;
  return deploymentName && buildId ? { deploymentName, buildId } : undefined;
}

/** Waits until a worker of `version` has polled, so the server knows it. */
export async function versionPolled(
  client: Client,
  version: WorkerDeploymentVersion,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const deployment = await describeDeployment(client, version.deploymentName);
    if (deployment.versions.some((v) => v.buildId === version.buildId)) return;
    await sleep(200);
  }
  throw new Error(`no worker of ${version.deploymentName}.${version.buildId} polled within ${timeoutMs} ms`);
}

/**
 * A versioned worker takes runs once its version is current (`docs-agent setup --set-current`): makes the version
 * of `env` current when it names one, once its workers polled; does nothing for an unversioned environment.
 */
export async function makeCurrentIfVersioned(client: Client, env: Record<string, string>): Promise<void> {
  const version = versionOfEnv(env);
  if (!version) return;
  await versionPolled(client, version);
  if ((await routeToVersion(client, version)) !== 'changed') {
    throw new Error(`${version.deploymentName}.${version.buildId} could not be made current`);
  }
}
