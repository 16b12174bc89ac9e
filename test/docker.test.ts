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
    assert.match(compose, /^\s*EXPORT_DIR: s3:\/\/exports$/m, 'the SeaweedFS bucket');
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
    'compose runs Jaeger v2 (OTLP in, UI published) and the worker exports its traces to it',
    { skip: composeSkipped() },
    async () => {
      const base = { DOCS_API_KEY: 'ci_placeholder', DOCS_API_BASE_URL: 'https://docs.example.test' };
      const traced = await composeConfig(base);
      assert.equal(traced.ok, true, traced.output);
      assert.match(traced.output, /image: jaegertracing\/jaeger:2\.\d+\.\d+/);
      assert.match(traced.output, /receivers\.otlp\.protocols\.http\.endpoint=0\.0\.0\.0:4318/);
      assert.match(traced.output, /127\.0\.0\.1:16686:16686/, 'the UI on a published port');
      assert.match(traced.output, /127\.0\.0\.1:4318:4318/, 'OTLP/HTTP in, for the CLI on the host');
      assert.match(traced.output, /OTEL_EXPORTER_OTLP_ENDPOINT: http:\/\/jaeger:4318\n/);
    },
  );

  test(
    "only compose's own variables reach the containers: a shell's OTEL_* and AWS_* do not",
    { skip: composeSkipped() },
    async () => {
      const shell = {
        DOCS_API_KEY: 'ci_placeholder',
        DOCS_API_BASE_URL: 'https://docs.example.test',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
        AWS_ACCESS_KEY_ID: 'AKIA-from-the-shell',
        AWS_ENDPOINT_URL_S3: 'https://s3.example.test',
        EXPORT_DIR: '/elsewhere',
      };
      const config = await composeConfig(shell);
      assert.equal(config.ok, true, config.output);
      assert.doesNotMatch(config.output, /localhost:4318|AKIA-from-the-shell|s3\.example\.test|\/elsewhere/);
      assert.match(config.output, /EXPORT_DIR: s3:\/\/exports\n/);
      assert.match(config.output, /AWS_ENDPOINT_URL_S3: http:\/\/seaweedfs:8333\n/);
      assert.match(config.output, /image: chrislusf\/seaweedfs:\d+\.\d+/);
      const compose = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
      assert.match(compose, /s3\.bucket\.create -name exports/, 'the one-shot creates the bucket');
      assert.match(compose, /fs\.configure -locationPrefix=\/buckets\/exports\/\.staging\/ -ttl=7d/);
    },
  );

  test(
    'the worker outlives its shutdown grace, and reads its secrets from Docker secrets when asked',
    { skip: composeSkipped() },
    async () => {
      const base = { DOCS_API_BASE_URL: 'https://docs.example.test', DOCS_API_KEY: '' };
      const config = await composeConfig({
        ...base,
        DOCS_API_KEY_SECRET: '/run/host/docs_api_key.txt',
        DOCS_API_KEY_FILE: '/run/secrets/docs_api_key',
        PAYLOAD_CODEC_KEYS_FILE: '/run/secrets/payload_codec_keys',
      });
      assert.equal(config.ok, true, config.output);
      assert.match(config.output, /stop_grace_period: 45s/);
      assert.match(config.output, /DOCS_API_KEY_FILE: \/run\/secrets\/docs_api_key\n/);
      assert.match(config.output, /file: \/run\/host\/docs_api_key\.txt/);
      const worker = config.output.slice(config.output.indexOf('\n  worker:'));
      assert.match(worker, /secrets:\n\s+- (source: )?docs_api_key\n\s+- (source: )?payload_codec_keys/);
      const cli = await composeConfig(
        { ...base, PAYLOAD_CODEC_KEYS_FILE: '/run/secrets/payload_codec_keys' },
        '--profile',
        'cli',
      );
      assert.equal(cli.ok, true, cli.output);
      const cliService = cli.output.slice(cli.output.indexOf('\n  cli:'), cli.output.indexOf('\n  jaeger:'));
      assert.match(cliService, /PAYLOAD_CODEC_KEYS_FILE: \/run\/secrets\/payload_codec_keys/);
      assert.doesNotMatch(cliService, /DOCS_API_KEY/, 'the API key stays with the worker');
    },
  );
});
