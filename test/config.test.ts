import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { describe, test } from 'node:test';
import { loadWorkerConfig } from '../src/config';
import { ConfigError } from '../src/contract/errors';

const SECRET = 'live_s3cr3t-value-123';
const valid = { DOCS_API_BASE_URL: 'https://docs.example.test', DOCS_API_KEY: SECRET };

describe('loadWorkerConfig', () => {
  test('applies the contract defaults', () => {
    const config = loadWorkerConfig(valid);
    assert.equal(config.TEMPORAL_TASK_QUEUE, 'docs-agent');
    assert.equal(config.EXPORT_DIR, path.resolve('./exports'));
    assert.equal(config.DOCS_API_RETRY_UNKNOWN_OUTCOME, false);
    assert.equal(config.DOCS_API_BASE_URL, 'https://docs.example.test');
  });

  test('reads every variable', () => {
    const config = loadWorkerConfig({
      ...valid,
      TEMPORAL_TASK_QUEUE: 'other-queue',
      EXPORT_DIR: '/var/exports',
      DOCS_API_RETRY_UNKNOWN_OUTCOME: 'true',
      WORKER_METRICS_PORT: '9464',
    });
    assert.equal(config.TEMPORAL_TASK_QUEUE, 'other-queue');
    assert.equal(config.EXPORT_DIR, '/var/exports');
    assert.equal(config.DOCS_API_RETRY_UNKNOWN_OUTCOME, true);
    assert.equal(config.WORKER_METRICS_PORT, 9464);
  });

  test('names every missing or bad variable and the rule, without a vendor default', () => {
    assert.throws(
      () => loadWorkerConfig({ DOCS_API_KEY: 'no-underscore', WORKER_METRICS_PORT: 'x' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /DOCS_API_BASE_URL: is required/);
        assert.match(error.message, /DOCS_API_KEY: must have the form <prefix>_<secret>/);
        assert.match(error.message, /WORKER_METRICS_PORT/);
        return true;
      },
    );
  });

  test('operations: health port, LOG_FORMAT text and LOG_LEVEL info by default, each value named', () => {
    const defaults = loadWorkerConfig(valid);
    assert.equal(defaults.WORKER_HEALTH_PORT, undefined);
    assert.equal(defaults.LOG_FORMAT, 'text');
    assert.equal(defaults.LOG_LEVEL, 'info');
    const set = loadWorkerConfig({
      ...valid,
      WORKER_HEALTH_PORT: '8080',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'debug',
    });
    assert.deepEqual([set.WORKER_HEALTH_PORT, set.LOG_FORMAT, set.LOG_LEVEL], [8080, 'json', 'debug']);
    assert.throws(
      () =>
        loadWorkerConfig({ ...valid, LOG_FORMAT: 'logfmt', LOG_LEVEL: 'trace', WORKER_HEALTH_PORT: '70000' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /LOG_FORMAT: must be one of text, json/);
        assert.match(error.message, /LOG_LEVEL: must be one of error, warn, info, debug/);
        assert.match(error.message, /WORKER_HEALTH_PORT: must be at most 65535/);
        return true;
      },
    );
  });

  test('budgets: default 100/1h each; <requests>/<duration> in any duration form', () => {
    const defaults = loadWorkerConfig(valid);
    assert.deepEqual(defaults.DOCS_API_ANALYTICS_RATE_LIMIT, { requests: 100, windowMs: 3_600_000 });
    assert.deepEqual(defaults.DOCS_API_AGENT_RATE_LIMIT, { requests: 100, windowMs: 3_600_000 });
    const set = loadWorkerConfig({
      ...valid,
      DOCS_API_ANALYTICS_RATE_LIMIT: '20/10s',
      DOCS_API_AGENT_RATE_LIMIT: '5000 / 1 day',
    });
    assert.deepEqual(set.DOCS_API_ANALYTICS_RATE_LIMIT, { requests: 20, windowMs: 10_000 });
    assert.deepEqual(set.DOCS_API_AGENT_RATE_LIMIT, { requests: 5000, windowMs: 86_400_000 });
    assert.deepEqual(
      loadWorkerConfig({ ...valid, DOCS_API_AGENT_RATE_LIMIT: '10/1h30m' }).DOCS_API_AGENT_RATE_LIMIT,
      {
        requests: 10,
        windowMs: 5_400_000,
      },
    );
  });

  test('a bad budget stops the worker, naming the variable and the form', () => {
    for (const bad of ['100', '0/1h', '-5/1h', '1.5/1h', '100/0s', '100/soon', '/1h', '']) {
      assert.throws(
        () => loadWorkerConfig({ ...valid, DOCS_API_ANALYTICS_RATE_LIMIT: bad }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, bad);
          assert.match(error.message, /DOCS_API_ANALYTICS_RATE_LIMIT: must be <requests>\/<duration>/);
          return true;
        },
      );
    }
    assert.throws(
      () => loadWorkerConfig({ ...valid, DOCS_API_AGENT_RATE_LIMIT: '100 per hour' }),
      /DOCS_API_AGENT_RATE_LIMIT: must be <requests>\/<duration>/,
    );
  });

  test('WORKER_SHUTDOWN_GRACE_TIME: a duration in any form, as milliseconds; anything else is named', () => {
    assert.equal(loadWorkerConfig(valid).WORKER_SHUTDOWN_GRACE_TIME, 30_000);
    for (const [text, ms] of [
      ['45s', 45_000],
      ['2 minutes', 120_000],
      ['1m30s', 90_000],
      ['5000', 5000],
      ['0', 0],
    ] as const) {
      assert.equal(
        loadWorkerConfig({ ...valid, WORKER_SHUTDOWN_GRACE_TIME: text }).WORKER_SHUTDOWN_GRACE_TIME,
        ms,
      );
    }
    for (const bad of ['', 'soon', '-5s', '30 parsecs']) {
      assert.throws(
        () => loadWorkerConfig({ ...valid, WORKER_SHUTDOWN_GRACE_TIME: bad }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, bad);
          assert.match(
            error.message,
            /WORKER_SHUTDOWN_GRACE_TIME: must be a duration: milliseconds or a number with a unit, such as 30s/,
          );
          return true;
        },
      );
    }
  });

  test('EXPORT_DIR s3://bucket[/prefix] is kept as given; EXPORT_S3_FORCE_PATH_STYLE defaults to false', () => {
    const local = loadWorkerConfig(valid);
    assert.equal(local.EXPORT_S3_FORCE_PATH_STYLE, false);
    const s3 = loadWorkerConfig({
      ...valid,
      EXPORT_DIR: 's3://acme-analytics/docs/exports',
      EXPORT_S3_FORCE_PATH_STYLE: 'true',
    });
    assert.equal(s3.EXPORT_DIR, 's3://acme-analytics/docs/exports');
    assert.equal(s3.EXPORT_S3_FORCE_PATH_STYLE, true);
    for (const bad of ['s3://', 's3://Upper-Case', 's3://ab', 's3://bucket/../up', 's3://bucket/a//b']) {
      assert.throws(
        () => loadWorkerConfig({ ...valid, EXPORT_DIR: bad }),
        (error: Error) =>
          error instanceof ConfigError &&
          /EXPORT_DIR: must be s3:\/\/bucket\[\/prefix\] with a bucket name of 3-63 lowercase letters/.test(
            error.message,
          ),
        bad,
      );
    }
    assert.throws(
      () => loadWorkerConfig({ ...valid, EXPORT_S3_FORCE_PATH_STYLE: 'sometimes' }),
      /EXPORT_S3_FORCE_PATH_STYLE: must be true or false/,
    );
  });

  test('EXPORT_LAYOUT default or hive (unset: per format), EXPORT_COMPRESSION none or gzip; others named', () => {
    const unset = loadWorkerConfig(valid);
    assert.equal(unset.EXPORT_LAYOUT, undefined);
    assert.equal(unset.EXPORT_COMPRESSION, 'none');
    const set = loadWorkerConfig({ ...valid, EXPORT_LAYOUT: 'hive', EXPORT_COMPRESSION: 'gzip' });
    assert.deepEqual([set.EXPORT_LAYOUT, set.EXPORT_COMPRESSION], ['hive', 'gzip']);
    assert.throws(
      () => loadWorkerConfig({ ...valid, EXPORT_LAYOUT: 'flat', EXPORT_COMPRESSION: 'zstd' }),
      (error: Error) =>
        error instanceof ConfigError &&
        /EXPORT_LAYOUT: must be default or hive/.test(error.message) &&
        /EXPORT_COMPRESSION: must be none or gzip/.test(error.message),
    );
  });

  test('rejects a non-http base URL', () => {
    assert.throws(
      () => loadWorkerConfig({ ...valid, DOCS_API_BASE_URL: 'ftp://docs.example.test' }),
      /DOCS_API_BASE_URL/,
    );
  });

  test('a bad key is rejected without echoing it', () => {
    const badKey = 'secretwithoutprefix';
    assert.throws(
      () => loadWorkerConfig({ ...valid, DOCS_API_KEY: badKey }),
      (error: unknown) => error instanceof Error && !error.message.includes(badKey),
    );
  });

  test('the parsed config never prints the key', () => {
    const config = loadWorkerConfig(valid);
    for (const printed of [
      JSON.stringify(config),
      inspect(config, { depth: 5 }),
      String(config.DOCS_API_KEY),
    ]) {
      assert.ok(!printed.includes(SECRET), printed);
      assert.ok(!printed.includes('s3cr3t'), printed);
    }
    assert.equal(config.DOCS_API_KEY.authorizationHeader(), `Bearer ${SECRET}`);
  });
  test('TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID: both join that version, neither is unversioned', () => {
    assert.equal(loadWorkerConfig(valid).deploymentVersion, undefined);
    const config = loadWorkerConfig({
      ...valid,
      TEMPORAL_DEPLOYMENT_NAME: 'default/docs-agent',
      TEMPORAL_WORKER_BUILD_ID: '0.1.0-3f2a9c1',
    });
    assert.deepEqual(config.deploymentVersion, {
      deploymentName: 'default/docs-agent',
      buildId: '0.1.0-3f2a9c1',
    });
  });

  test('an image built with GIT_SHA: TEMPORAL_DEPLOYMENT_NAME alone joins <package version>-<sha>', () => {
    const { version } = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../package.json'), 'utf8')) as {
      version: string;
    };
    const stamped = { ...valid, DOCS_AGENT_GIT_SHA: '3f2a9c1' };
    assert.equal(loadWorkerConfig(stamped).deploymentVersion, undefined);
    assert.deepEqual(
      loadWorkerConfig({ ...stamped, TEMPORAL_DEPLOYMENT_NAME: 'docs-agent' }).deploymentVersion,
      {
        deploymentName: 'docs-agent',
        buildId: `${version}-3f2a9c1`,
      },
    );
    assert.equal(
      loadWorkerConfig({ ...stamped, TEMPORAL_DEPLOYMENT_NAME: 'docs-agent', TEMPORAL_WORKER_BUILD_ID: 'b7' })
        .deploymentVersion?.buildId,
      'b7',
    );
  });

  test('only one of the deployment variables, or a bad one, stops the worker naming both', () => {
    for (const [env, rule] of [
      [{ TEMPORAL_DEPLOYMENT_NAME: 'docs-agent' }, /TEMPORAL_WORKER_BUILD_ID: is not set/],
      [{ TEMPORAL_WORKER_BUILD_ID: 'v2' }, /TEMPORAL_DEPLOYMENT_NAME: is not set/],
    ] as const) {
      assert.throws(
        () => loadWorkerConfig({ ...valid, ...env }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, rule);
          assert.match(error.message, /set both .* or neither to run unversioned/);
          assert.match(error.message, /TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID/);
          return true;
        },
      );
    }
    for (const [env, rule] of [
      [
        { TEMPORAL_DEPLOYMENT_NAME: 'docs.agent', TEMPORAL_WORKER_BUILD_ID: 'v2' },
        /TEMPORAL_DEPLOYMENT_NAME: must not contain "\."/,
      ],
      [
        { TEMPORAL_DEPLOYMENT_NAME: 'docs-agent', TEMPORAL_WORKER_BUILD_ID: '' },
        /TEMPORAL_WORKER_BUILD_ID: must not be empty/,
      ],
      [
        { TEMPORAL_DEPLOYMENT_NAME: ' docs-agent', TEMPORAL_WORKER_BUILD_ID: 'v2' },
        /TEMPORAL_DEPLOYMENT_NAME: must not start or end with whitespace/,
      ],
    ] as const) {
      assert.throws(
        () => loadWorkerConfig({ ...valid, ...env }),
        (error: unknown) => error instanceof ConfigError && rule.test(error.message),
      );
    }
  });
});

describe('secrets from files (DOCS_API_KEY_FILE), as Docker and Kubernetes mount them', () => {
  test('the key is read from the file, without its trailing newline; the file and the variable together are refused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-agent-config-'));
    try {
      const file = path.join(dir, 'docs_api_key');
      fs.writeFileSync(file, `${SECRET}\n`);
      const fromFile = loadWorkerConfig({
        DOCS_API_BASE_URL: valid.DOCS_API_BASE_URL,
        DOCS_API_KEY_FILE: file,
      });
      assert.equal(fromFile.DOCS_API_KEY.authorizationHeader(), `Bearer ${SECRET}`);

      for (const [env, message] of [
        [
          { ...valid, DOCS_API_KEY_FILE: file },
          /DOCS_API_KEY and DOCS_API_KEY_FILE are both set: set one of them, not both/,
        ],
        [
          { DOCS_API_KEY_FILE: path.join(dir, 'missing') },
          /DOCS_API_KEY_FILE: cannot read ".*missing" \(ENOENT\)/,
        ],
      ] as const) {
        assert.throws(
          () => loadWorkerConfig({ ...env, DOCS_API_BASE_URL: valid.DOCS_API_BASE_URL }),
          (error: unknown) => {
            assert.ok(error instanceof ConfigError);
            assert.match(error.message, message);
            assert.ok(!error.message.includes(SECRET), 'the key is never echoed');
            return true;
          },
        );
      }
      fs.writeFileSync(file, 'no-underscore\n');
      assert.throws(
        () => loadWorkerConfig({ DOCS_API_BASE_URL: valid.DOCS_API_BASE_URL, DOCS_API_KEY_FILE: file }),
        /DOCS_API_KEY_FILE: must have the form <prefix>_<secret>/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
