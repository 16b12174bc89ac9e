import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { before, test } from 'node:test';
import { parseAllDocuments, parse } from 'yaml';
import { parseDuration } from '../../src/contract/duration';
import { DEPLOY_DIR } from '../helpers/deploy';

const BASE = path.join(DEPLOY_DIR, 'kubernetes');
const ROOT = path.resolve(__dirname, '../..');

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}
interface Container {
  name: string;
  image?: string;
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  tcpSocket?: { port: string | number };
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: { containers: Container[]; terminationGracePeriodSeconds?: number };
}

let objects: K8sObject[];
let kustomization: { resources: string[]; images?: { name: string; newTag: string }[] };

/** The base's objects, from the files its kustomization lists (as `kustomize build` reads them). */
before(async () => {
  kustomization = parse(
    await fs.readFile(path.join(BASE, 'kustomization.yaml'), 'utf8'),
  ) as typeof kustomization;
  objects = [];
  for (const file of kustomization.resources) {
    for (const document of parseAllDocuments(await fs.readFile(path.join(BASE, file), 'utf8'))) {
      assert.deepEqual(document.errors, [], file);
      objects.push(document.toJS() as K8sObject);
    }
  }
});

function find(kind: string, name: string): K8sObject {
  const object = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(object, `${kind} ${name}`);
  return object;
}
const template = (deployment: K8sObject) => deployment.spec?.template as PodTemplate;
const container = (deployment: K8sObject) => {
  const [first] = template(deployment).spec.containers;
  assert.ok(first);
  return first;
};
/** What a container's environment holds: its ConfigMaps' data, then its own env (which wins). */
function environment(deployment: K8sObject): Record<string, string | undefined> {
  const main = container(deployment);
  const fromMaps = (main.envFrom ?? []).map(
    (source) => find('ConfigMap', source.configMapRef?.name ?? '').data,
  );
  return Object.assign({}, ...fromMaps, ...(main.env ?? []).map((e) => ({ [e.name]: e.value }))) as Record<
    string,
    string | undefined
  >;
}

test('every object validates against the Kubernetes schemas and KEDA’s (kubernetes-models)', async () => {
  const [core, apps, policy, keda] = await Promise.all([
    import('kubernetes-models/v1'),
    import('kubernetes-models/apps/v1'),
    import('kubernetes-models/policy/v1'),
    import('@kubernetes-models/keda/keda.sh/v1alpha1'),
  ]);
  const models: Record<string, { new (data: never): { validate(): void } }> = {
    'v1/ConfigMap': core.ConfigMap,
    'v1/Service': core.Service,
    'apps/v1/Deployment': apps.Deployment,
    'policy/v1/PodDisruptionBudget': policy.PodDisruptionBudget,
    'keda.sh/v1alpha1/ScaledObject': keda.ScaledObject,
  };
  assert.deepEqual(objects.map((o) => `${o.kind} ${o.metadata.name}`).sort(), [
    'ConfigMap docs-agent-worker',
    'Deployment docs-agent-codec-server',
    'Deployment docs-agent-worker',
    'PodDisruptionBudget docs-agent-worker',
    'ScaledObject docs-agent-worker',
    'Service docs-agent-codec-server',
  ]);
  for (const object of objects) {
    const Model = models[`${object.apiVersion}/${object.kind}`];
    assert.ok(Model, `a schema for ${object.apiVersion} ${object.kind}`);
    assert.doesNotThrow(
      () => new Model(object as never).validate(),
      `${object.kind} ${object.metadata.name}`,
    );
  }
  // The check can fail: a port given as text is refused.
  const broken = structuredClone(find('Deployment', 'docs-agent-worker'));
  (template(broken).spec.containers[0]?.ports ?? [])[0]!.containerPort = '8081' as unknown as number;
  assert.throws(() => new apps.Deployment(broken as never).validate(), /containerPort must be integer/);
});

test('every environment variable the manifests set is one the code reads', async () => {
  const sources = await readSources(path.join(ROOT, 'src'));
  // The Temporal connection's variables are read by @temporalio/envconfig, as the contract says.
  sources.push(await fs.readFile(require.resolve('@temporalio/envconfig/lib/envconfig-toml.js'), 'utf8'));
  const read = (name: string) => sources.some((text) => new RegExp(`\\b${name}\\b`).test(text));
  const names = objects
    .filter((o) => o.kind === 'Deployment')
    .flatMap((deployment) => Object.keys(environment(deployment)));
  assert.ok(names.length > 15, names.join(','));
  assert.deepEqual(
    names.filter((name) => !read(name)),
    [],
  );
});

test('ports, probes, grace time, versioning and scaling agree with the configuration', () => {
  const worker = find('Deployment', 'docs-agent-worker');
  const env = environment(worker);
  const main = container(worker);
  const port = (name: string) => main.ports?.find((p) => p.name === name)?.containerPort;
  assert.equal(String(port('health')), env.WORKER_HEALTH_PORT);
  assert.equal(String(port('metrics')), env.WORKER_METRICS_PORT);
  assert.equal(template(worker).metadata.annotations?.['prometheus.io/port'], env.WORKER_METRICS_PORT);
  assert.deepEqual(main.livenessProbe?.httpGet, { path: '/livez', port: 'health' });
  assert.deepEqual(main.readinessProbe?.httpGet, { path: '/readyz', port: 'health' });
  assert.ok(env.DOCS_API_KEY_FILE && env.DOCS_API_KEY === undefined, 'the key only from the Secret file');

  const graceMs = parseDuration(env.WORKER_SHUTDOWN_GRACE_TIME ?? '');
  assert.ok(graceMs !== undefined);
  assert.ok((template(worker).spec.terminationGracePeriodSeconds ?? 30) * 1000 > graceMs);

  // The build id is the image's tag, and KEDA reads the backlog of that version of that task queue.
  const tag = kustomization.images?.find((image) => image.name === main.image)?.newTag;
  assert.equal(env.TEMPORAL_WORKER_BUILD_ID, tag);
  const scaled = find('ScaledObject', 'docs-agent-worker').spec as {
    scaleTargetRef: { name: string };
    minReplicaCount: number;
    triggers: { type: string; metadata: Record<string, string> }[];
  };
  assert.equal(scaled.scaleTargetRef.name, worker.metadata.name);
  assert.ok(scaled.minReplicaCount >= 1);
  const [trigger] = scaled.triggers;
  assert.equal(trigger?.type, 'temporal');
  assert.deepEqual(
    [trigger.metadata.endpoint, trigger.metadata.namespace, trigger.metadata.taskQueue],
    [env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE, env.TEMPORAL_TASK_QUEUE],
  );
  assert.equal(trigger.metadata.workerDeploymentName, env.TEMPORAL_DEPLOYMENT_NAME);
  assert.equal(trigger.metadata.workerDeploymentBuildId, env.TEMPORAL_WORKER_BUILD_ID);

  const pdb = find('PodDisruptionBudget', 'docs-agent-worker').spec as {
    selector: { matchLabels: Record<string, string> };
  };
  for (const [key, value] of Object.entries(pdb.selector.matchLabels)) {
    assert.equal(template(worker).metadata.labels[key], value, `the PDB selects the worker's pods: ${key}`);
  }

  const codec = find('Deployment', 'docs-agent-codec-server');
  const codecPort = container(codec).ports?.find((p) => p.name === 'http')?.containerPort;
  assert.equal(String(codecPort), environment(codec).CODEC_SERVER_PORT);
  const service = find('Service', 'docs-agent-codec-server').spec as {
    selector: Record<string, string>;
    ports: { port: number; targetPort: string }[];
  };
  assert.equal(service.ports[0]?.targetPort, 'http');
  for (const [key, value] of Object.entries(service.selector)) {
    assert.equal(template(codec).metadata.labels[key], value);
  }
});

async function readSources(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true, recursive: true });
  return Promise.all(
    entries
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => fs.readFile(path.join(entry.parentPath, entry.name), 'utf8')),
  );
}
