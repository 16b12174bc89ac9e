import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '..');
const run = promisify(execFile);

interface Stage {
  name: string;
  /** Instructions in order, e.g. ['RUN', 'mkdir -p /exports']. */
  steps: [string, string][];
}

/** The Dockerfile's stages and their instructions (continuation lines joined, comments dropped). */
function dockerfileStages(): Stage[] {
  const text = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const [, instruction = '', args = ''] = match;
    if (instruction === 'FROM') {
      stages.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1] ?? '', steps: [] });
    } else {
      stages.at(-1)?.steps.push([instruction, args.trim()]);
    }
  }
  return stages;
}

/** Without Docker's compose (Debian's docker-compose) the compose checks are skipped, except in CI. */
function composeSkipped(): string | false {
  const found = (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => fs.existsSync(path.join(dir, 'docker-compose')));
  if (found || process.env.CI === 'true') return false;
  return 'no docker-compose on PATH (Debian package docker-compose; CI=true makes this a failure)';
}

async function composeConfig(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await run('docker-compose', [...args, 'config'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    return { ok: true, output: stdout };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: stdout + stderr };
  }
}

describe('Dockerfile and docker-compose.yml', () => {
  test('the worker image creates the exports mount point, owned by its user, before switching to it', () => {
    const worker = dockerfileStages().at(-1);
    assert.equal(worker?.name, 'worker', 'the worker is the last (default) stage');
    const steps = worker.steps;
    const userAt = steps.findIndex(([instruction]) => instruction === 'USER');
    assert.ok(userAt >= 0, 'the worker stage switches to an unprivileged user');
    const user = steps[userAt]?.[1] ?? '';
    assert.notEqual(user, 'root');
    const exportDir = steps.find(([i, args]) => i === 'ENV' && /^EXPORT_DIR[= ]/.test(args));
    const compose = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    const mount = /^\s*-\s*exports:(\/\S+)\s*$/m.exec(compose)?.[1];
    assert.equal(mount, '/exports', 'compose mounts the exports volume at /exports (EXPORT_DIR=/exports)');
    assert.match(
      compose,
      /^\s*EXPORT_DIR: \$\{EXPORT_DIR:-s3:\/\/exports\}$/m,
      'the MinIO bucket by default',
    );
    assert.equal(exportDir, undefined, 'the image leaves EXPORT_DIR to compose');
    const runs = steps
      .slice(0, userAt)
      .filter(([i]) => i === 'RUN')
      .map(([, args]) => args);
    assert.ok(
      runs.some((args) => /\bmkdir -p (\S+ )*\/exports\b/.test(args)),
      `a RUN before USER creates /exports: ${JSON.stringify(runs)}`,
    );
    assert.ok(
      runs.some((args) => new RegExp(`\\bchown (-R )?${user}(:${user})? (\\S+ )*/exports\\b`).test(args)),
      `a RUN before USER gives /exports to ${user}: ${JSON.stringify(runs)}`,
    );
  });

  test(
    'compose requires DOCS_API_BASE_URL (no default), with or without the demo profile',
    {
      skip: composeSkipped(),
    },
    async () => {
      const key = { DOCS_API_KEY: 'ci_placeholder' };
      const missing = await composeConfig(key);
      assert.equal(missing.ok, false, 'config passes without DOCS_API_BASE_URL');
      assert.match(missing.output, /set DOCS_API_BASE_URL/);
      assert.equal((await composeConfig(key, '--profile', 'demo')).ok, false);

      const real = await composeConfig({ ...key, DOCS_API_BASE_URL: 'https://docs.example.test' });
      assert.equal(real.ok, true, real.output);
      assert.match(real.output, /DOCS_API_BASE_URL: https:\/\/docs\.example\.test/);
      const demo = await composeConfig(
        { ...key, DOCS_API_BASE_URL: 'http://simulator:4010' },
        '--profile',
        'demo',
      );
      assert.equal(demo.ok, true, demo.output);
      assert.match(demo.output, /DOCS_API_BASE_URL: http:\/\/simulator:4010/);
    },
  );

  test(
    'compose runs Jaeger (OTLP in, UI published) and the worker exports its traces to it',
    { skip: composeSkipped() },
    async () => {
      const base = { DOCS_API_KEY: 'ci_placeholder', DOCS_API_BASE_URL: 'https://docs.example.test' };
      const traced = await composeConfig(base);
      assert.equal(traced.ok, true, traced.output);
      assert.match(traced.output, /^ {2}jaeger:$/m);
      assert.match(traced.output, /image: jaegertracing\/all-in-one:1\.76\.0/);
      assert.match(traced.output, /COLLECTOR_OTLP_ENABLED: "true"/);
      assert.match(traced.output, /127\.0\.0\.1:16686:16686/, 'the UI on a published port');
      assert.match(traced.output, /127\.0\.0\.1:4318:4318/, 'OTLP/HTTP in, for the CLI on the host');
      assert.match(traced.output, /OTEL_EXPORTER_OTLP_ENDPOINT: http:\/\/jaeger:4318\n/);
      assert.match(traced.output, /OTEL_EXPORTER_OTLP_PROTOCOL: http\/protobuf\n/);
      // Set and empty: no endpoint, so the worker loads no tracing at all.
      const off = await composeConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: '' });
      assert.equal(off.ok, true, off.output);
      assert.match(off.output, /OTEL_EXPORTER_OTLP_ENDPOINT: (''|"")\n/);
    },
  );

  test(
    'compose exports to its MinIO bucket by default, and to AWS S3 with the documented overrides',
    { skip: composeSkipped() },
    async () => {
      const base = { DOCS_API_KEY: 'ci_placeholder', DOCS_API_BASE_URL: 'https://docs.example.test' };
      const minio = await composeConfig(base);
      assert.equal(minio.ok, true, minio.output);
      assert.match(minio.output, /^ {2}minio:$/m);
      assert.match(minio.output, /^ {2}minio-setup:$/m);
      const compose = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
      assert.match(compose, /mc mb --ignore-existing local\/exports/, 'the one-shot creates the bucket');
      assert.match(compose, /mc ilm rule add --prefix \.staging\/ --expire-days 7 local\/exports/);
      assert.match(minio.output, /EXPORT_DIR: s3:\/\/exports\n/);
      assert.match(minio.output, /AWS_ENDPOINT_URL_S3: http:\/\/minio:9000\n/);
      assert.match(minio.output, /EXPORT_S3_FORCE_PATH_STYLE: "true"/);

      const aws = await composeConfig({
        ...base,
        EXPORT_DIR: 's3://my-bucket/docs-exports',
        AWS_REGION: 'eu-west-1',
        AWS_ENDPOINT_URL_S3: '',
        EXPORT_S3_FORCE_PATH_STYLE: 'false',
        AWS_ACCESS_KEY_ID: '',
        AWS_SECRET_ACCESS_KEY: '',
      });
      assert.equal(aws.ok, true, aws.output);
      assert.match(aws.output, /EXPORT_DIR: s3:\/\/my-bucket\/docs-exports/);
      assert.match(aws.output, /AWS_ENDPOINT_URL_S3: ''/, 'empty: the SDK uses AWS S3');
      assert.match(aws.output, /AWS_ACCESS_KEY_ID: ''/, 'empty: the role of the instance or task');
    },
  );
});
