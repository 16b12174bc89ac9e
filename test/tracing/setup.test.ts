import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { tracingRequested } from '../../src/tracing/setup';

const ROOT = path.resolve(__dirname, '../..');

describe('tracing: only the OTEL_* environment turns it on', () => {
  test('an endpoint or a traces exporter asks for traces; none, disabled or nothing does not', () => {
    assert.equal(tracingRequested({}), false);
    assert.equal(tracingRequested({ OTEL_SERVICE_NAME: 'worker' }), false);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }), true);
    assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' }), true);
    assert.equal(
      tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
      false,
    );
    assert.equal(
      tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
      false,
    );
  });

  test('off: the worker module loads and startTracing returns nothing, without loading the SDK', async () => {
    // A fresh process, so that its module cache shows what the worker's start path loaded.
    const script = `
      const { startTracing } = require('./src/tracing/setup');
      require('./src/worker');
      startTracing('docs-agent-worker').then((tracing) => {
        const loaded = Object.keys(require.cache).filter((file) =>
          /@opentelemetry[\\\\/](sdk-|exporter-|resources)|interceptors-opentelemetry/.test(file));
        console.log(JSON.stringify({ tracing: tracing === undefined ? 'off' : 'on', loaded }));
      });`;
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '' };
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: ROOT,
      env,
    });
    assert.deepEqual(JSON.parse(stdout), { tracing: 'off', loaded: [] });
  });
});
