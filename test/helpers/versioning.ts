import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { versionPolled as polled } from '../../dev/worker-version';

const STARTER = path.resolve(__dirname, '../../src/starter.ts');

/** The deployment name the rolling-deploy tests use, as the Temporal Worker Controller would inject it. */
export const DEPLOYMENT_NAME = 'docs-agent';

/** A worker process's environment for version `buildId` of DEPLOYMENT_NAME. */
export function versionEnv(buildId: string): Record<string, string> {
  return { TEMPORAL_DEPLOYMENT_NAME: DEPLOYMENT_NAME, TEMPORAL_WORKER_BUILD_ID: buildId };
}

/**
 * Server settings that let a version's drain be seen within seconds, not the default 3 minutes (the server
 * counts a version's open pinned runs in visibility on that interval).
 */
export const FAST_DRAINAGE = {
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '2s',
  'matching.wv.VersionDrainageStatusRefreshInterval': '1s',
};

/** `docs-agent setup <args>`, as an operator runs it, against the server at `address`. */
export function runSetup(
  address: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, 'setup', ...args],
      { env: { PATH: process.env.PATH ?? '', TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'default' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Waits until a worker of `buildId` of DEPLOYMENT_NAME has polled, so the server knows the version. */
export function versionPolled(client: Client, buildId: string): Promise<void> {
  return polled(client, { deploymentName: DEPLOYMENT_NAME, buildId });
}

/** Makes `buildId` current with `docs-agent setup --set-current`, the way the deploy steps say. */
export async function makeCurrent(client: Client, address: string, buildId: string): Promise<void> {
  await versionPolled(client, buildId);
  const setup = await runSetup(address, [
    '--deployment-name',
    DEPLOYMENT_NAME,
    '--build-id',
    buildId,
    '--set-current',
  ]);
  assert.equal(setup.code, 0, `${setup.stdout}\n${setup.stderr}`);
  assert.match(setup.stdout, new RegExp(`^deployment ${DEPLOYMENT_NAME}: current ${buildId}$`, 'm'));
}

/** The build ids of the workers that completed the run's workflow tasks, in order, without repeats. */
export async function taskBuildIds(client: Client, workflowId: string, runId?: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const ids: string[] = [];
  for (const event of history.events ?? []) {
    const completed = event.workflowTaskCompletedEventAttributes;
    if (!completed) continue;
    const buildId = completed.deploymentVersion?.buildId ?? 'unversioned';
    if (ids.at(-1) !== buildId) ids.push(buildId);
  }
  return ids;
}

/** The version and behaviour the server records for a run (`temporal workflow describe` shows the same). */
export async function runVersioning(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<{ buildId: string | undefined; behavior: string }> {
  const { raw } = await client.workflow.getHandle(workflowId, runId).describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  return {
    buildId: info?.deploymentVersion?.buildId ?? undefined,
    behavior: temporal.api.enums.v1.VersioningBehavior[info?.behavior ?? 0] ?? 'unknown',
  };
}

/** Every run of the workflows that match `query`, closed or open, with its status. */
export async function runsOf(
  client: Client,
  query: string,
): Promise<{ workflowId: string; runId: string; status: string }[]> {
  const runs: { workflowId: string; runId: string; status: string }[] = [];
  for await (const run of client.workflow.list({ query })) {
    runs.push({ workflowId: run.workflowId, runId: run.runId, status: run.status.name });
  }
  return runs;
}
