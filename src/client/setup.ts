import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { SearchAttributeType, WorkerDeploymentVersion } from '@temporalio/common';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { temporal } from '@temporalio/proto';
import { DEFAULT_NEXUS_ENDPOINT, SEARCH_ATTRIBUTE_KEYS } from '../contract/names';
import { InvariantError } from '../contract/errors';
import { grpcStatusOf, taskQueueFromEnv } from './connect';

/** gRPC status codes (grpc.io/docs/guides/status-codes) the operator and deployment calls answer. */
const GRPC = { notFound: 5, alreadyExists: 6, failedPrecondition: 9 };
/** The server (or this key, e.g. on Temporal Cloud) does not let this connection act: 7, 12, 16. */
const NOT_ALLOWED_HERE = new Set([7, 12, 16]);

/**
 * A search attribute's state: present, registered with the right type before; added, registered now; manual,
 * missing and not registrable here (`steps` say how); conflict, registered as another type, which workflows cannot use.
 */
export interface SearchAttributeSetup {
  name: string;
  type: SearchAttributeType;
  state: 'present' | 'added' | 'manual' | 'conflict';
  registeredAs?: string;
  steps?: string[];
}

function manualSteps(namespace: string, name: string, type: SearchAttributeType): string[] {
  const typeName = type === 'KEYWORD' ? 'Keyword' : type;
  return [
    `Temporal Cloud: tcld namespace search-attributes add -n ${namespace} --sa "${name}=${typeName}" (or in the Cloud UI: Namespaces > ${namespace} > Custom Search Attributes)`,
    `a self-hosted server: temporal operator search-attribute create -n ${namespace} --name ${name} --type ${typeName}`,
  ];
}

/**
 * Prepares a namespace for the workflows, idempotently: checks that it exists (else nothing else is checked) and
 * registers the contract's search attributes that are missing where the server allows it; elsewhere each is
 * reported with its manual step. `ready`: workflows can be started there.
 */
export async function setUpNamespace(client: Client) {
  const { namespace } = client.options;
  try {
    await client.workflowService.describeNamespace({ namespace });
  } catch (error) {
    if (grpcStatusOf(error) !== GRPC.notFound) throw error;
    return { namespace, namespaceFound: false, searchAttributes: [], ready: false };
  }
  const operator = client.connection.operatorService;
  const registered = await operator.listSearchAttributes({ namespace }).then(
    (answer) => answer.customAttributes ?? {},
    (error: unknown) => {
      if (!NOT_ALLOWED_HERE.has(grpcStatusOf(error) ?? -1)) throw error;
      return undefined;
    },
  );
  const searchAttributes: SearchAttributeSetup[] = [];
  for (const { name, type } of SEARCH_ATTRIBUTE_KEYS) {
    const wanted = encodeSearchAttributeIndexedValueType(type);
    if (wanted === undefined) throw new InvariantError(`${name}: no indexed value type for ${type}`);
    const existing = registered?.[name];
    if (existing !== undefined) {
      const registeredAs = temporal.api.enums.v1.IndexedValueType[existing] ?? String(existing);
      searchAttributes.push(
        existing === wanted
          ? { name, type, state: 'present' }
          : { name, type, state: 'conflict', registeredAs },
      );
      continue;
    }
    try {
      await operator.addSearchAttributes({ namespace, searchAttributes: { [name]: wanted } });
      searchAttributes.push({ name, type, state: 'added' });
    } catch (error) {
      const code = grpcStatusOf(error) ?? -1;
      // Registered meanwhile (another setup): what was wanted is there.
      if (code === GRPC.alreadyExists) searchAttributes.push({ name, type, state: 'present' });
      else if (!NOT_ALLOWED_HERE.has(code)) throw error;
      else searchAttributes.push({ name, type, state: 'manual', steps: manualSteps(namespace, name, type) });
    }
  }
  const ready = searchAttributes.every((a) => a.state === 'present' || a.state === 'added');
  return { namespace, namespaceFound: true, searchAttributes, ready };
}

/**
 * Creates the Nexus endpoint that routes callers of any namespace to this worker's task queue (as `temporal
 * operator nexus endpoint create` does); one of that name already there is kept. Returns its id. Defaults: the
 * endpoint `docs-agent`, the client's namespace, TEMPORAL_TASK_QUEUE (else `docs-agent`).
 */
export async function ensureNexusEndpoint(
  client: Client,
  options: { endpoint?: string; targetNamespace?: string; taskQueue?: string } = {},
): Promise<{ endpoint: string; id: string; created: boolean }> {
  const endpoint = options.endpoint ?? DEFAULT_NEXUS_ENDPOINT;
  const operator = client.connection.operatorService;
  const namespace = options.targetNamespace ?? client.options.namespace;
  const target = { worker: { namespace, taskQueue: options.taskQueue ?? taskQueueFromEnv() } };
  try {
    const answer = await operator.createNexusEndpoint({ spec: { name: endpoint, target } });
    return { endpoint, id: answer.endpoint?.id ?? '', created: true };
  } catch (error) {
    if (grpcStatusOf(error) !== GRPC.alreadyExists) throw error;
  }
  const { endpoints } = await operator.listNexusEndpoints({ name: endpoint, pageSize: 1 });
  return { endpoint, id: endpoints?.[0]?.id ?? '', created: false };
}

/**
 * The deployment's routing and each version's status, as `temporal worker deployment describe` shows them: not
 * `found` until a worker of it has polled; `current`, the build id new runs start on (undefined: unversioned
 * workers take them); a status `inactive` (never current), `current`, `ramping`, `draining` (pinned runs still
 * open) or `drained` (safe to stop).
 */
export async function describeDeployment(client: Client, deploymentName: string) {
  const { namespace } = client.options;
  let info: temporal.api.deployment.v1.IWorkerDeploymentInfo | null | undefined;
  try {
    ({ workerDeploymentInfo: info } = await client.workflowService.describeWorkerDeployment({
      namespace,
      deploymentName,
    }));
  } catch (error) {
    if (grpcStatusOf(error) !== GRPC.notFound) throw error;
    return { deploymentName, found: false, current: undefined, ramping: undefined, versions: [] as const };
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
    versions: (info?.versionSummaries ?? []).map(({ deploymentVersion, status }) => {
      const name = temporal.api.enums.v1.WorkerDeploymentVersionStatus[status ?? 0] ?? 'unknown';
      return {
        buildId: deploymentVersion?.buildId ?? '',
        status: name.replace('WORKER_DEPLOYMENT_VERSION_STATUS_', '').toLowerCase(),
      };
    }),
  };
}

/**
 * Sends every new run (and every long-lived workflow at its next continue-as-new) to `version`; with
 * `rampPercentage` (0-100), that share of new runs, the rest to the current version. `missing`: no worker of that
 * version has polled yet (start them first).
 *
 * A version shows in its deployment as soon as a worker polls, a moment before the server has registered its task
 * queues; a routing change in that moment is refused as if the version were missing. So a refusal for a version the
 * deployment lists is asked again for up to 15 s; one the deployment does not list is missing.
 */
export async function routeToVersion(
  client: Client,
  { deploymentName, buildId }: WorkerDeploymentVersion,
  rampPercentage?: number,
): Promise<'changed' | 'missing'> {
  const request = {
    namespace: client.options.namespace,
    deploymentName,
    buildId,
    identity: client.options.identity,
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      if (rampPercentage === undefined)
        await client.workflowService.setWorkerDeploymentCurrentVersion(request);
      else {
        await client.workflowService.setWorkerDeploymentRampingVersion({
          ...request,
          percentage: rampPercentage,
        });
      }
      return 'changed';
    } catch (error) {
      const code = grpcStatusOf(error);
      if (code !== GRPC.notFound && code !== GRPC.failedPrecondition) throw error;
      const { versions } = await describeDeployment(client, deploymentName);
      if (!versions.some((v) => v.buildId === buildId) || Date.now() >= deadline) return 'missing';
      await sleep(250);
    }
  }
}

/** @deprecated Use `routeToVersion(client, version)`. */
export const setCurrentVersion = (client: Client, version: WorkerDeploymentVersion) =>
  routeToVersion(client, version);

/** @deprecated Use `routeToVersion(client, version, percentage)`. */
export const rampToVersion = routeToVersion;
