import type { Client } from '@temporalio/client';
import type { SearchAttributeType } from '@temporalio/common';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_KEYS } from '../contract/names';
import { InvariantError } from '../contract/errors';
import { grpcStatusOf } from './connect';

/** gRPC status codes (grpc.io/docs/guides/status-codes) the operator service answers where it may not act. */
const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNIMPLEMENTED = 12;
const GRPC_UNAUTHENTICATED = 16;
const NOT_ALLOWED_HERE = new Set([GRPC_PERMISSION_DENIED, GRPC_UNIMPLEMENTED, GRPC_UNAUTHENTICATED]);

export interface SearchAttributeSetup {
  name: string;
  type: SearchAttributeType;
  /**
   * present: registered with the right type before; added: registered now; manual: missing, and this server
   * (or this key, e.g. on Temporal Cloud) does not allow registering it: `steps` say how; conflict: registered
   * with another type, which workflows cannot use (an operator must remove or rename it).
   */
  state: 'present' | 'added' | 'manual' | 'conflict';
  /** The type it has, for a conflict. */
  registeredAs?: string;
  /** What an operator runs where the server refused (tcld or the Cloud UI, or the Temporal CLI). */
  steps?: string[];
}

export interface NamespaceSetup {
  namespace: string;
  /** False when the namespace does not exist: nothing else was checked. */
  namespaceFound: boolean;
  searchAttributes: SearchAttributeSetup[];
  /** Whether workflows can be started here: the namespace exists and every search attribute is present. */
  ready: boolean;
}

function manualSteps(namespace: string, name: string, type: SearchAttributeType): string[] {
  const typeName = type === 'KEYWORD' ? 'Keyword' : type;
  return [
    `Temporal Cloud: tcld namespace search-attributes add -n ${namespace} --sa "${name}=${typeName}" (or in the Cloud UI: Namespaces > ${namespace} > Custom Search Attributes)`,
    `a self-hosted server: temporal operator search-attribute create -n ${namespace} --name ${name} --type ${typeName}`,
  ];
}

/**
 * Prepares a namespace for the workflows, idempotently: checks that it exists, and registers the contract's
 * search attributes (`DocsProjectId`, `AgentJobId`, `AgentJobStatus`, Keyword) that are missing, through the
 * operator service where the server allows it. Where it does not (Temporal Cloud, a key without the right),
 * each missing one is reported with the `tcld` / Cloud UI step. Nothing is removed or changed.
 */
export async function setUpNamespace(client: Client): Promise<NamespaceSetup> {
  const { namespace } = client.options;
  try {
    await client.workflowService.describeNamespace({ namespace });
  } catch (error) {
    if (grpcStatusOf(error) !== GRPC_NOT_FOUND) throw error;
    return { namespace, namespaceFound: false, searchAttributes: [], ready: false };
  }
  const operator = client.connection.operatorService;
  let registered: Record<string, temporal.api.enums.v1.IndexedValueType> | undefined;
  try {
    registered = (await operator.listSearchAttributes({ namespace })).customAttributes ?? {};
  } catch (error) {
    if (!NOT_ALLOWED_HERE.has(grpcStatusOf(error) ?? -1)) throw error;
  }
  const searchAttributes: SearchAttributeSetup[] = [];
  for (const key of SEARCH_ATTRIBUTE_KEYS) {
    const wanted = encodeSearchAttributeIndexedValueType(key.type);
    if (wanted === undefined) throw new InvariantError(`${key.name}: no indexed value type for ${key.type}`);
    const existing = registered?.[key.name];
    const base = { name: key.name, type: key.type };
    if (existing !== undefined && existing === wanted) {
      searchAttributes.push({ ...base, state: 'present' });
      continue;
    }
    if (existing !== undefined) {
      const registeredAs = temporal.api.enums.v1.IndexedValueType[existing] ?? String(existing);
      searchAttributes.push({ ...base, state: 'conflict', registeredAs });
      continue;
    }
    try {
      await operator.addSearchAttributes({ namespace, searchAttributes: { [key.name]: wanted } });
      searchAttributes.push({ ...base, state: 'added' });
    } catch (error) {
      const code = grpcStatusOf(error);
      // Registered meanwhile (another setup): what was wanted is there.
      if (code === GRPC_ALREADY_EXISTS) searchAttributes.push({ ...base, state: 'present' });
      else if (NOT_ALLOWED_HERE.has(code ?? -1))
        searchAttributes.push({
          ...base,
          state: 'manual',
          steps: manualSteps(namespace, key.name, key.type),
        });
      else throw error;
    }
  }
  return {
    namespace,
    namespaceFound: true,
    searchAttributes,
    ready: searchAttributes.every((a) => a.state === 'present' || a.state === 'added'),
  };
}
