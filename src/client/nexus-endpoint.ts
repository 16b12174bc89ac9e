import type { Client } from '@temporalio/client';
import { DEFAULT_NEXUS_ENDPOINT } from '../contract/names';
import { grpcStatusOf, taskQueueFromEnv } from './connect';

const GRPC_ALREADY_EXISTS = 6;

export interface NexusEndpointOptions {
  /** Endpoint name callers use (default `docs-agent`). */
  endpoint?: string;
  /** The namespace the worker polls (default: the client's). */
  targetNamespace?: string;
  /** The worker's task queue (default: TEMPORAL_TASK_QUEUE, else `docs-agent`). */
  taskQueue?: string;
}

/**
 * Creates the Nexus endpoint that routes callers of any namespace to this worker's task queue, as
 * `temporal operator nexus endpoint create --name docs-agent --target-namespace <ns> --target-task-queue docs-agent`
 * does; an endpoint of that name already there is left as it is. Returns its id (the Nexus HTTP API's path
 * names it) and whether it was created now.
 */
export async function ensureNexusEndpoint(
  client: Client,
  options: NexusEndpointOptions = {},
): Promise<{ endpoint: string; id: string; created: boolean }> {
  const endpoint = options.endpoint ?? DEFAULT_NEXUS_ENDPOINT;
  const operator = client.connection.operatorService;
  try {
    const answer = await operator.createNexusEndpoint({
      spec: {
        name: endpoint,
        target: {
          worker: {
            namespace: options.targetNamespace ?? client.options.namespace,
            taskQueue: options.taskQueue ?? taskQueueFromEnv(),
          },
        },
      },
    });
    return { endpoint, id: answer.endpoint?.id ?? '', created: true };
  } catch (error) {
    if (grpcStatusOf(error) !== GRPC_ALREADY_EXISTS) throw error;
  }
  const { endpoints } = await operator.listNexusEndpoints({ name: endpoint, pageSize: 1 });
  return { endpoint, id: endpoints?.[0]?.id ?? '', created: false };
}
