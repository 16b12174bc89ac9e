import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import {
  MAX_DEFAULT_CACHED_WORKFLOWS,
  MIN_DEFAULT_CACHED_WORKFLOWS,
  defaultMaxCachedWorkflows,
} from '../src/config';
import { loadWorkerConfig } from '../src/config';

const valid = { DOCS_API_BASE_URL: 'https://docs.example.test', DOCS_API_KEY: 'live_s3cr3t-value-123' };

/** The default a fresh node process computes from its own heap limit, and what its config says. */
function inProcessWithHeap(maxOldSpaceMiB: number): { heapMiB: number; derived: number; config: number } {
  const script = [
    `const { defaultMaxCachedWorkflows, heapSizeLimitMiB } = require(${JSON.stringify(path.resolve(__dirname, '../src/config.ts'))});`,
    `const { loadWorkerConfig } = require(${JSON.stringify(path.resolve(__dirname, '../src/config.ts'))});`,
    `const config = loadWorkerConfig(${JSON.stringify(valid)});`,
    'console.log(JSON.stringify({ heapMiB: heapSizeLimitMiB(), derived: defaultMaxCachedWorkflows(), config: config.WORKER_MAX_CACHED_WORKFLOWS }));',
  ].join('\n');
  const out = execFileSync(
    process.execPath,
    [`--max-old-space-size=${maxOldSpaceMiB}`, '--import', 'tsx', '-e', script],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
  );
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as {
    heapMiB: number;
    derived: number;
    config: number;
  };
}

describe('WORKER_MAX_CACHED_WORKFLOWS default', () => {
  test('half the heap beyond the worker, at 0.4 MiB per cached job, between 10 and 500', () => {
    assert.equal(defaultMaxCachedWorkflows(4144), MAX_DEFAULT_CACHED_WORKFLOWS, 'a default 4 GiB heap');
    assert.equal(defaultMaxCachedWorkflows(1024), 500);
    assert.equal(defaultMaxCachedWorkflows(512), 320);
    assert.equal(defaultMaxCachedWorkflows(384), 160);
    assert.equal(defaultMaxCachedWorkflows(200), MIN_DEFAULT_CACHED_WORKFLOWS);
  });

  test('a worker with no tuning gets it; the variable overrides it', () => {
    assert.equal(loadWorkerConfig(valid).WORKER_MAX_CACHED_WORKFLOWS, defaultMaxCachedWorkflows());
    assert.equal(
      loadWorkerConfig({ ...valid, WORKER_MAX_CACHED_WORKFLOWS: '2500' }).WORKER_MAX_CACHED_WORKFLOWS,
      2500,
    );
    assert.throws(
      () => loadWorkerConfig({ ...valid, WORKER_MAX_CACHED_WORKFLOWS: '0' }),
      /WORKER_MAX_CACHED_WORKFLOWS/,
    );
  });

  test('read from the process heap limit: --max-old-space-size=512 gives a smaller cache', () => {
    // The heap limit adds the young generation to --max-old-space-size (560 MiB for 512 on node 20).
    const small = inProcessWithHeap(512);
    assert.ok(small.heapMiB >= 512 && small.heapMiB < 640, `heap limit ${small.heapMiB} MiB`);
    assert.equal(small.derived, defaultMaxCachedWorkflows(small.heapMiB));
    assert.ok(small.derived >= 320 && small.derived < MAX_DEFAULT_CACHED_WORKFLOWS, `${small.derived}`);
    assert.equal(small.config, small.derived);
    const large = inProcessWithHeap(4096);
    assert.deepEqual([large.derived, large.config], [500, 500]);
  });
});
