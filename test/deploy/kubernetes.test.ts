import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { before, test } from 'node:test';
import { isDeepStrictEqual, promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';
import { loadWorkerConfig } from '../../src/config';
import { parseDuration } from '../../src/contract/duration';
import { DEPLOY_DIR } from '../helpers/deploy';
import { tempDir } from '../helpers/temp-dir';
import { type Schema, validateAgainstSchema } from './openapi-schema';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const BASE = path.join(DEPLOY_DIR, 'kubernetes');
const CONTROLLER = path.join(DEPLOY_DIR, 'worker-controller');
const COMPONENTS = ['temporal-api-key', 'temporal-mtls'] as const;
const CRDS = path.join(__dirname, 'fixtures/temporal-worker-controller');
const WORKER = 'docs-agent-worker';
const VERSION_LABEL = 'app.kubernetes.io/version';
const NEXT_TAG = '0.2.0-3f2a9c1';
/** Where the tag is set, for both paths (relative to deploy/kubernetes). */
const IMAGE_COMPONENT = 'image/kustomization.yaml';
/**
 * What the controller (v1.8.1, internal/k8s/deployments.go, ApplyControllerPodSpecModifications) adds to each
 * container of a version's pods: always the first four, then the TLS server name, then either mTLS or the API key.
 */
const CONTROLLER_ENV = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_DEPLOYMENT_NAME',
  'TEMPORAL_WORKER_BUILD_ID',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_API_KEY',
];

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}
interface Container {
  name: string;
  image?: string;
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  tcpSocket?: { port: string | number };
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    containers: Container[];
    terminationGracePeriodSeconds?: number;
    volumes?: { name: string; secret?: { secretName: string } }[];
  };
}
interface ScaledObjectSpec {
  scaleTargetRef: { name: string };
  minReplicaCount: number;
  cooldownPeriod?: number;
  triggers: { type: string; metadata: Record<string, string>; authenticationRef?: { name: string } }[];
}

/** kustomize, or kubectl's built-in copy of it. Without either the checks are skipped, except in CI. */
function findKustomize(): string[] | undefined {
  const candidates = [
    { probe: ['kustomize', 'version'], build: ['kustomize', 'build'] },
    { probe: ['kubectl', 'version', '--client'], build: ['kubectl', 'kustomize'] },
  ];
  return candidates.find(
    ({ probe: [command, ...args] }) => spawnSync(command!, args, { stdio: 'ignore' }).status === 0,
  )?.build;
}
const KUSTOMIZE = findKustomize();
const skip =
  KUSTOMIZE || process.env.CI === 'true'
    ? false
    : 'no kustomize or kubectl on PATH (CI=true makes this a failure)';

/** What `kustomize build dir` gives: the objects `kubectl apply -k dir` would send. */
async function build(dir: string): Promise<K8sObject[]> {
  assert.ok(KUSTOMIZE, 'kustomize or kubectl must be on PATH');
  const [command, ...args] = KUSTOMIZE;
  const { stdout } = await run(command!, [...args, dir], { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((document) => {
    assert.deepEqual(document.errors, []);
    return document.toJS() as K8sObject;
  });
}

/** An overlay in a temporary directory: bases and components are named relative to it, as kustomize wants. */
async function overlay(name: string, kustomization: { resources: string[]; components?: string[] }) {
  const dir = await tempDir(name);
  const relative = (dirs: string[] = []) => dirs.map((target) => path.relative(dir, target));
  await fs.writeFile(
    path.join(dir, 'kustomization.yaml'),
    JSON.stringify({
      resources: relative(kustomization.resources),
      components: relative(kustomization.components),
    }),
  );
  return dir;
}

/** The base as the next release's checkout holds it: the same files with another image tag. */
async function baseTagged(tag: string): Promise<string> {
  const dir = path.join(await tempDir('docs-agent-base'), 'kubernetes');
  await fs.cp(BASE, dir, { recursive: true });
  const file = path.join(dir, IMAGE_COMPONENT);
  const text = await fs.readFile(file, 'utf8');
  const tagged = text.replace(/newTag: \S+/, `newTag: ${tag}`);
  assert.notEqual(tagged, text);
  await fs.writeFile(file, tagged);
  return dir;
}

const builds: Record<string, K8sObject[]> = {};

before(async () => {
  if (skip) return;
  builds.base = await build(BASE);
  builds.next = await build(await baseTagged(NEXT_TAG));
  builds.controller = await build(CONTROLLER);
  for (const component of COMPONENTS) {
    builds[component] = await build(
      await overlay(component, { resources: [BASE], components: [path.join(BASE, 'components', component)] }),
    );
  }
});

function find(objects: K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  assert.equal(found.length, 1, `one ${kind} ${name ?? ''}: ${found.map((o) => o.metadata.name).join()}`);
  return found[0]!;
}
/** The worker's Deployment (one per build id: its name ends with the build id). */
const workerOf = (objects: K8sObject[]) =>
  find(
    objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'worker'),
    'Deployment',
  );
const template = (object: K8sObject) => object.spec?.template as PodTemplate;
const container = (object: K8sObject) => {
  const [first] = template(object).spec.containers;
  assert.ok(first);
  return first;
};
const scaledObject = (objects: K8sObject[]) =>
  find(objects, 'ScaledObject').spec as unknown as ScaledObjectSpec;
/** What a container's environment holds: its ConfigMaps' data, then its own env (which wins). */
function environment(objects: K8sObject[], object: K8sObject): Record<string, string | undefined> {
  const main = container(object);
  const fromMaps = (main.envFrom ?? []).map(
    (source) => find(objects, 'ConfigMap', source.configMapRef?.name).data,
  );
  const own = (main.env ?? []).map((e) => ({
    [e.name]: e.value ?? (e.valueFrom ? '<from a Secret>' : undefined),
  }));
  return Object.assign({}, ...fromMaps, ...own) as Record<string, string | undefined>;
}

test(
  'every object validates against the Kubernetes schemas and KEDA’s (kubernetes-models)',
  { skip },
  async () => {
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
      'keda.sh/v1alpha1/TriggerAuthentication': keda.TriggerAuthentication,
    };
    const kinds = (objects: K8sObject[]) => objects.map((o) => `${o.kind} ${o.metadata.name}`).sort();
    const shared = [
      'ConfigMap docs-agent-worker',
      'Deployment docs-agent-codec-server',
      'PodDisruptionBudget docs-agent-worker',
      'Service docs-agent-codec-server',
    ];
    assert.deepEqual(
      kinds(builds.base!),
      [...shared, 'Deployment docs-agent-worker-0.1.0', 'ScaledObject docs-agent-worker-0.1.0'].sort(),
    );
    for (const component of COMPONENTS) {
      assert.deepEqual(
        kinds(builds[component]!),
        [...kinds(builds.base!), 'TriggerAuthentication docs-agent-temporal'].sort(),
      );
    }
    // The controller's path has no worker Deployment of its own: the controller makes one per version.
    assert.deepEqual(
      kinds(builds.controller!),
      [...shared, 'Connection docs-agent-temporal', 'WorkerDeployment docs-agent-worker'].sort(),
    );

    for (const [name, objects] of Object.entries(builds)) {
      for (const object of objects.filter((o) => o.apiVersion !== 'temporal.io/v1alpha1')) {
        const Model = models[`${object.apiVersion}/${object.kind}`];
        assert.ok(Model, `a schema for ${object.apiVersion} ${object.kind}`);
        assert.doesNotThrow(
          () => new Model(object as never).validate(),
          `${name}: ${object.kind} ${object.metadata.name}`,
        );
      }
    }
    // The check can fail: a port given as text is refused.
    const broken = structuredClone(workerOf(builds.base!));
    (template(broken).spec.containers[0]?.ports ?? [])[0]!.containerPort = '8081' as unknown as number;
    assert.throws(() => new apps.Deployment(broken as never).validate(), /containerPort must be integer/);
  },
);

/** The CRDs of temporal-worker-controller v1.8.1 (test/deploy/fixtures), by kind. */
async function controllerSchemas(): Promise<Record<string, Schema>> {
  const schemas: Record<string, Schema> = {};
  for (const file of ['temporal.io_workerdeployments.yaml', 'temporal.io_connections.yaml']) {
    const crd = parse(await fs.readFile(path.join(CRDS, file), 'utf8')) as {
      spec: {
        group: string;
        names: { kind: string };
        versions: { name: string; schema: { openAPIV3Schema: Schema } }[];
      };
    };
    const [version] = crd.spec.versions;
    assert.equal(`${crd.spec.group}/${version?.name}`, 'temporal.io/v1alpha1');
    schemas[crd.spec.names.kind] = version!.schema.openAPIV3Schema;
  }
  return schemas;
}

/** The CEL rules of those CRDs, each as the same test in TypeScript (CEL itself is not evaluated here). */
const CEL_RULES: Record<string, (self: never) => boolean> = {
  'size(self.metadata.name) <= 63': (self: K8sObject) => self.metadata.name.length <= 63,
  "self.strategy != 'Progressive' || (has(self.steps) && size(self.steps) > 0)": (self: {
    strategy: string;
    steps?: unknown[];
  }) => self.strategy !== 'Progressive' || (self.steps?.length ?? 0) > 0,
  '!has(self.gate) || !has(self.gate.inputFrom) || (has(self.gate.inputFrom.configMapKeyRef) != has(self.gate.inputFrom.secretKeyRef))':
    (self: { gate?: { inputFrom?: { configMapKeyRef?: unknown; secretKeyRef?: unknown } } }) =>
      !self.gate?.inputFrom ||
      (self.gate.inputFrom.configMapKeyRef === undefined) !==
        (self.gate.inputFrom.secretKeyRef === undefined),
  "duration(self.pauseDuration) >= duration('30s')": (self: { pauseDuration: string }) =>
    (parseDuration(self.pauseDuration) ?? 0) >= 30_000,
  '!(has(self.mutualTLSSecretRef) && has(self.apiKeySecretRef))': (self: {
    mutualTLSSecretRef?: unknown;
    apiKeySecretRef?: unknown;
  }) => !(self.mutualTLSSecretRef && self.apiKeySecretRef),
};

function controllerFindings(schemas: Record<string, Schema>, object: K8sObject): string[] {
  const schema = schemas[object.kind];
  assert.ok(schema, `a CRD for ${object.kind}`);
  const { errors, rules } = validateAgainstSchema(schema, object);
  for (const { path: at, rule, self } of rules) {
    const holds = CEL_RULES[rule];
    if (!holds) errors.push(`${at}: CEL rule not checked here: ${rule}`);
    else if (!holds(self as never)) errors.push(`${at}: breaks ${rule}`);
  }
  return errors;
}

test(
  'the WorkerDeployment and the Connection validate against the Worker Controller’s CRDs (v1.8.1)',
  { skip },
  async () => {
    const schemas = await controllerSchemas();
    const objects = builds.controller!.filter((o) => o.apiVersion === 'temporal.io/v1alpha1');
    assert.equal(objects.length, 2);
    for (const object of objects) assert.deepEqual(controllerFindings(schemas, object), [], object.kind);

    // The checks can fail: an unknown field, a strategy not in the enum, a missing field, a step under 30 s.
    const workerDeployment = find(objects, 'WorkerDeployment');
    interface Spec {
      replica?: number;
      rollout: { strategy: string; steps: { pauseDuration: string }[] };
      sunset?: object;
      template: PodTemplate;
    }
    const broken = (change: (spec: Spec) => void) => {
      const copy = structuredClone(workerDeployment);
      change(copy.spec as unknown as Spec);
      return controllerFindings(schemas, copy).join();
    };
    assert.match(
      broken((spec) => (spec.replica = 2)),
      /\.spec\.replica: unknown field/,
    );
    assert.match(
      broken((spec) => (spec.rollout.strategy = 'RollingUpdate')),
      /RollingUpdate not in/,
    );
    assert.match(
      broken((spec) => delete spec.sunset),
      /sunset is required/,
    );
    assert.match(
      broken((spec) => (spec.rollout.steps[0]!.pauseDuration = '10s')),
      /breaks duration/,
    );
    assert.match(
      broken((spec) => ((spec.template.spec.containers[0]!.ports ?? [])[0]!.containerPort = '8081' as never)),
      /containerPort: must be an integer/,
    );
  },
);

test(
  'every environment variable the manifests and the Worker Controller set is one the code reads',
  { skip },
  async () => {
    const sources = await readSources(path.join(ROOT, 'src'));
    // The Temporal connection's variables are read by @temporalio/envconfig, as the contract says.
    sources.push(await fs.readFile(require.resolve('@temporalio/envconfig/lib/envconfig-toml.js'), 'utf8'));
    const read = (name: string) => sources.some((text) => new RegExp(`\\b${name}\\b`).test(text));
    const names = Object.entries(builds).flatMap(([, objects]) =>
      objects
        .filter((o) => o.kind === 'Deployment')
        .flatMap((deployment) => Object.keys(environment(objects, deployment))),
    );
    const workerDeployment = find(builds.controller!, 'WorkerDeployment');
    names.push(...Object.keys(environment(builds.controller!, workerDeployment)), ...CONTROLLER_ENV);
    assert.ok(new Set(names).size > 20, names.join(','));
    assert.deepEqual(
      [...new Set(names)].filter((name) => !read(name)),
      [],
    );
  },
);

test('ports, probes, grace time, versioning and scaling agree with the configuration', { skip }, () => {
  const objects = builds.base!;
  const worker = workerOf(objects);
  const env = environment(objects, worker);
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

  // KEDA reads the backlog of this version of this task queue, on the server the worker uses.
  const scaled = scaledObject(objects);
  assert.equal(scaled.scaleTargetRef.name, worker.metadata.name);
  assert.ok(scaled.minReplicaCount >= 1);
  assert.equal(scaled.cooldownPeriod, undefined, 'cooldownPeriod only paces a scale to 0');
  const [trigger] = scaled.triggers;
  assert.equal(trigger?.type, 'temporal');
  assert.deepEqual(
    [trigger.metadata.endpoint, trigger.metadata.namespace, trigger.metadata.taskQueue],
    [env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE, env.TEMPORAL_TASK_QUEUE],
  );
  assert.equal(trigger.metadata.workerDeploymentName, env.TEMPORAL_DEPLOYMENT_NAME);
  assert.equal(trigger.metadata.workerDeploymentBuildId, env.TEMPORAL_WORKER_BUILD_ID);

  // A drain is never held for good: one pod may always go, and so may any pod that is not ready.
  const pdb = find(objects, 'PodDisruptionBudget').spec as {
    maxUnavailable?: number;
    minAvailable?: number;
    unhealthyPodEvictionPolicy?: string;
  };
  assert.deepEqual(
    [pdb.maxUnavailable, pdb.minAvailable, pdb.unhealthyPodEvictionPolicy],
    [1, undefined, 'AlwaysAllow'],
  );

  const codec = find(objects, 'Deployment', 'docs-agent-codec-server');
  const codecPort = container(codec).ports?.find((p) => p.name === 'http')?.containerPort;
  assert.equal(String(codecPort), environment(objects, codec).CODEC_SERVER_PORT);
  const service = find(objects, 'Service').spec as {
    selector: Record<string, string>;
    ports: { port: number; targetPort: string }[];
  };
  assert.equal(service.ports[0]?.targetPort, 'http');
  for (const [key, value] of Object.entries(service.selector)) {
    assert.equal(template(codec).metadata.labels[key], value);
  }
});

test(
  'the build id is written once, as the image tag, and names the worker’s Deployment and ScaledObject',
  { skip },
  async () => {
    for (const objects of [builds.base!, builds.next!]) {
      const worker = workerOf(objects);
      const tag = container(worker).image?.split(':')[1];
      assert.ok(tag);
      const env = environment(objects, worker);
      assert.equal(env.TEMPORAL_WORKER_BUILD_ID, tag);
      assert.equal(worker.metadata.name, `${WORKER}-${tag}`);
      assert.match(worker.metadata.name, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a valid Deployment name');
      for (const labels of [
        worker.metadata.labels,
        (worker.spec?.selector as { matchLabels: object }).matchLabels,
        template(worker).metadata.labels,
      ]) {
        assert.equal((labels as Record<string, string>)[VERSION_LABEL], tag);
      }
      assert.equal(find(objects, 'ScaledObject').metadata.name, `${WORKER}-${tag}`);
      assert.equal(scaledObject(objects).triggers[0]?.metadata.workerDeploymentBuildId, tag);
    }
    // The Worker Controller's directory runs the same image, and no file of either path but one holds the tag.
    const tag = container(workerOf(builds.base!)).image?.split(':')[1] ?? '';
    assert.equal(
      container(find(builds.controller!, 'WorkerDeployment')).image,
      container(workerOf(builds.base!)).image,
    );
    const holding = [];
    for (const dir of [BASE, CONTROLLER]) {
      for (const file of await fs.readdir(dir, { recursive: true })) {
        const at = path.join(dir, file);
        if (file.endsWith('.yaml') && (await fs.readFile(at, 'utf8')).includes(tag)) holding.push(at);
      }
    }
    assert.deepEqual(holding, [path.join(BASE, IMAGE_COMPONENT)]);
  },
);

test(
  'a rollout from v1 to v2 on the base adds v2’s worker beside v1’s and leaves v1’s alone',
  { skip },
  () => {
    const [v1, v2] = [builds.base!, builds.next!];
    const v1Worker = workerOf(v1);
    const v2Worker = workerOf(v2);
    // `kubectl apply -k` creates or updates the objects of its build by kind and name and deletes none: v2's build
    // names none of v1's versioned objects, so applying it leaves v1's Deployment and ScaledObject as they were.
    const names = (objects: K8sObject[]) => new Set(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    const versioned = (objects: K8sObject[]) => [
      `Deployment/${workerOf(objects).metadata.name}`,
      `ScaledObject/${find(objects, 'ScaledObject').metadata.name}`,
    ];
    for (const name of versioned(v1)) assert.ok(!names(v2).has(name), `v2's build leaves ${name} alone`);
    for (const name of versioned(v2)) assert.ok(!names(v1).has(name), name);
    // The objects both builds share stay as they were, but for the codec server's image: v2's serves every
    // version's payloads, as v1's did.
    const changed = v2
      .filter((o) => names(v1).has(`${o.kind}/${o.metadata.name}`))
      .filter((o) => !isDeepStrictEqual(o, find(v1, o.kind, o.metadata.name)));
    assert.deepEqual(
      changed.map((o) => `${o.kind}/${o.metadata.name}`),
      ['Deployment/docs-agent-codec-server'],
    );
    const codec = structuredClone(changed[0]!);
    container(codec).image = container(find(v1, codec.kind, codec.metadata.name)).image ?? '';
    assert.deepEqual(codec, find(v1, codec.kind, codec.metadata.name));
    // Neither Deployment selects the other's pods (so neither scales or replaces them), and each ScaledObject scales
    // its own version on its own version's backlog.
    const selects = (deployment: K8sObject, pod: PodTemplate) =>
      Object.entries(
        (deployment.spec?.selector as { matchLabels: Record<string, string> }).matchLabels,
      ).every(([key, value]) => pod.metadata.labels[key] === value);
    assert.ok(selects(v1Worker, template(v1Worker)) && selects(v2Worker, template(v2Worker)));
    assert.ok(!selects(v1Worker, template(v2Worker)) && !selects(v2Worker, template(v1Worker)));
    for (const objects of [v1, v2]) {
      assert.equal(scaledObject(objects).scaleTargetRef.name, workerOf(objects).metadata.name);
    }
    // The one disruption budget covers both versions' pods.
    const pdb = find(v2, 'PodDisruptionBudget').spec as { selector: { matchLabels: Record<string, string> } };
    for (const worker of [v1Worker, v2Worker]) {
      for (const [key, value] of Object.entries(pdb.selector.matchLabels)) {
        assert.equal(template(worker).metadata.labels[key], value);
      }
    }
  },
);

test('the API key and mTLS components give the worker and KEDA the same credentials', { skip }, () => {
  const secretOf = (objects: K8sObject[], parameter: string) =>
    (
      find(objects, 'TriggerAuthentication').spec as {
        secretTargetRef: { parameter: string; name: string; key: string }[];
      }
    ).secretTargetRef.find((ref) => ref.parameter === parameter);
  for (const component of COMPONENTS) {
    const objects = builds[component]!;
    const [trigger] = scaledObject(objects).triggers;
    assert.equal(
      trigger?.authenticationRef?.name,
      find(objects, 'TriggerAuthentication').metadata.name,
      component,
    );
    assert.equal(environment(objects, workerOf(objects)).TEMPORAL_TLS, 'true', component);
    // The codec server does not talk to Temporal: nothing is added to it.
    assert.deepEqual(
      find(objects, 'Deployment', 'docs-agent-codec-server'),
      find(builds.base!, 'Deployment', 'docs-agent-codec-server'),
    );
  }

  const apiKey = builds['temporal-api-key']!;
  const keyEnv = container(workerOf(apiKey)).env?.find((e) => e.name === 'TEMPORAL_API_KEY')?.valueFrom
    ?.secretKeyRef;
  assert.deepEqual(keyEnv, { name: secretOf(apiKey, 'apiKey')?.name, key: secretOf(apiKey, 'apiKey')?.key });

  const mtls = builds['temporal-mtls']!;
  const worker = workerOf(mtls);
  const env = environment(mtls, worker);
  const mount = container(worker).volumeMounts?.find((m) => m.name === 'temporal-tls');
  const volume = template(worker).spec.volumes?.find((v) => v.name === 'temporal-tls');
  for (const [parameter, variable] of [
    ['cert', 'TEMPORAL_TLS_CLIENT_CERT_PATH'],
    ['key', 'TEMPORAL_TLS_CLIENT_KEY_PATH'],
  ] as const) {
    const ref = secretOf(mtls, parameter);
    assert.equal(volume?.secret?.secretName, ref?.name);
    assert.equal(env[variable], `${mount?.mountPath}/${ref?.key}`);
  }
});

test(
  'under the Worker Controller the worker runs the same pod and joins the version the controller names',
  { skip },
  () => {
    const objects = builds.controller!;
    const workerDeployment = find(objects, 'WorkerDeployment');
    const spec = workerDeployment.spec as {
      replicas?: number;
      workerOptions: { connectionRef: { name: string }; temporalNamespace: string };
      rollout: { strategy: string };
      sunset: { scaledownDelay: string; deleteDelay: string };
    };
    // The pod template is the base's worker, without the variables the controller sets itself.
    const plain = structuredClone(template(workerOf(builds.base!)));
    delete plain.metadata.labels[VERSION_LABEL];
    plain.spec.containers[0]!.env = (plain.spec.containers[0]!.env ?? []).filter(
      (e) => !CONTROLLER_ENV.includes(e.name),
    );
    assert.deepEqual(template(workerDeployment), plain);

    const env = environment(objects, workerDeployment);
    const connection = find(objects, 'Connection', spec.workerOptions.connectionRef.name).spec as {
      hostPort: string;
    };
    assert.deepEqual(
      [connection.hostPort, spec.workerOptions.temporalNamespace],
      [env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE],
    );
    assert.equal(env.TEMPORAL_WORKER_BUILD_ID, undefined);
    assert.equal(env.TEMPORAL_DEPLOYMENT_NAME, undefined);
    assert.ok(spec.replicas && spec.replicas >= 1);
    assert.notEqual(spec.rollout.strategy, 'Manual', 'the controller routes new runs to each new version');

    // The controller names the deployment <namespace>/<name> and the build <tag>-<hash of the pod template>; the
    // worker's configuration takes both (a Kubernetes namespace has no dot, and neither may this name).
    assert.doesNotMatch(workerDeployment.metadata.name, /\./);
    const tag = container(workerDeployment).image?.split(':')[1];
    const config = loadWorkerConfig({
      ...(env as NodeJS.ProcessEnv),
      DOCS_API_KEY_FILE: undefined,
      DOCS_API_KEY: 'dak_0123456789abcdef',
      TEMPORAL_DEPLOYMENT_NAME: `docs-agent/${workerDeployment.metadata.name}`,
      TEMPORAL_WORKER_BUILD_ID: `${tag}-5d8f7c9b4`,
    });
    assert.deepEqual(config.deploymentVersion, {
      deploymentName: `docs-agent/${workerDeployment.metadata.name}`,
      buildId: `${tag}-5d8f7c9b4`,
    });
  },
);

async function readSources(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true, recursive: true });
  return Promise.all(
    entries
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => fs.readFile(path.join(entry.parentPath, entry.name), 'utf8')),
  );
}
