import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { getProgressQuery } from '../../src/contract/messages';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import type { VisitorsExportInput, VisitorsExportManifest } from '../../src/contract/visitors-export';
import { createVisitorsExportActivities } from '../../src/activities/visitors-export';
import { S3Destination } from '../../src/exports/s3-destination';
import { ExportStaging } from '../../src/exports/destination';
import { visitorsExport } from '../../src/workflows';
import { startStack } from '../../dev/stack';
import { startTestWorker } from '../../dev/worker';
import type { S3Keys } from '../../dev/moto';
import { useS3Stack, type S3TestServer } from '../helpers/s3';
import { withoutEndCheck } from '../helpers/page-requests';
import { offsetsNamed } from '../helpers/staged-chunks';

// One moto (IAM checks on for the bad destinations) behind a fault proxy, one dev server and simulator, one worker exporting to the bucket.
const { s3, stack } = useS3Stack((server) =>
  startStack({
    name: 'export-s3',
    simulator: { analytics: { paths: 1_000 } },
    worker: () => ({ extraDeps: s3Deps(server, 'nightly') }),
  }),
);

/** `docs-agent export run` as its own process against the test's dev server, with its exit code and output. */
function cliExportRun(taskQueue: string, ...argv: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, 'export', 'run', ...argv],
      {
        env: {
          PATH: process.env.PATH ?? '',
          TEMPORAL_ADDRESS: stack().env.address,
          TEMPORAL_NAMESPACE: 'default',
          TEMPORAL_TASK_QUEUE: taskQueue,
        },
      },
      (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout }),
    );
  });
}

function s3Deps(
  server: S3TestServer,
  prefix: string,
  keys: S3Keys = server.moto.writer,
  bucket = server.bucket,
) {
  return {
    exportDir: `s3://${bucket}/${prefix}`,
    exportS3: {
      forcePathStyle: true,
      clientConfig: { endpoint: server.url, region: 'us-east-1', credentials: keys },
    },
  };
}

const STARTER = path.resolve(__dirname, '../../src/starter.ts');
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

function run(input: VisitorsExportInput, taskQueue = DEFAULT_TASK_QUEUE) {
  return stack().client.workflow.execute(visitorsExport, {
    taskQueue,
    workflowId: visitorsExportWorkflowId(input.projectId, input.dateFrom ?? '', input.dateTo ?? ''),
    args: [input],
  });
}

async function keysUnder(prefix: string): Promise<string[]> {
  const answer = await s3().client.send(new ListObjectsV2Command({ Bucket: s3().bucket, Prefix: prefix }));
  return (answer.Contents ?? []).map((object) => object.Key ?? '').sort();
}

async function objectText(key: string): Promise<string> {
  const answer = await s3().client.send(new GetObjectCommand({ Bucket: s3().bucket, Key: key }));
  return (await answer.Body?.transformToString('utf8')) ?? '';
}

/** The export as a reader finds it: the manifest, and each file it lists checked against its bytes and hash. */
async function readExport(folder: string) {
  const manifest = JSON.parse(await objectText(`${folder}/manifest.json`)) as VisitorsExportManifest;
  for (const entry of manifest.files) {
    const text = await objectText(`${folder}/${entry.name}`);
    assert.equal(Buffer.byteLength(text), entry.bytes, `${entry.name}: bytes`);
    assert.equal(createHash('sha256').update(text).digest('hex'), entry.sha256, `${entry.name}: sha256`);
  }
  const csv = await objectText(`${folder}/${manifest.file}`);
  const paths = csv.trim().split('\n').slice(1);
  return { manifest, paths };
}

/** The offsets of the pages the service was asked for, for a project, in order. */
/** The offsets requested, the end check's read of page 0 again apart. */
function pageOffsets(projectId: string): number[] {
  const requests = stack()
    .sim.requests()
    .filter((r) => r.route === 'getVisitors' && r.projectId === projectId);
  return withoutEndCheck(requests).map((r) => Number(r.query.offset));
}

/** The offset of the last page a staged chunk at `path` holds, pages of 50 rows; NaN for another key. */
function lastPageOf(path: string): number {
  const [, first, pages] = /\/chunk-\d+-\d+-(\d+)-(\d+)\.ndjson$/.exec(path) ?? [];
  return Number(first) + (Number(pages) - 1) * 50;
}

/** Writes (PUT, and the POST of DeleteObjects) the proxy saw under a key prefix. */
function writesUnder(prefix: string) {
  return s3()
    .proxy.requests()
    .filter(
      (r) => (r.method === 'PUT' || r.method === 'POST') && r.path.startsWith(`/${s3().bucket}/${prefix}`),
    );
}

describe('visitorsExport to S3-compatible object storage', () => {
  test('writes the export under the prefix with the local layout, manifest last, checksums, no staged page left', async () => {
    const result = await run({ projectId: 'acme', ...RANGE, pageSize: 50, concurrency: 4 });
    const folder = 'nightly/acme/2026-11-01_2026-11-02';
    assert.deepEqual(result.files, [
      `s3://exports/${folder}/visitors.csv`,
      `s3://exports/${folder}/totals.json`,
      `s3://exports/${folder}/manifest.json`,
    ]);
    assert.equal(result.rows, 1_000);
    assert.equal(result.pages, 20);
    const progress = await stack()
      .client.workflow.getHandle(visitorsExportWorkflowId('acme', RANGE.dateFrom, RANGE.dateTo))
      .query(getProgressQuery);
    assert.equal(progress.destination, 's3://exports/nightly', 'getProgress names the destination');
    assert.deepEqual(await keysUnder('nightly/'), [
      `${folder}/manifest.json`,
      `${folder}/totals.json`,
      `${folder}/visitors.csv`,
    ]);
    const { manifest, paths } = await readExport(folder);
    assert.equal(new Set(paths).size, 1_000);
    assert.deepEqual(
      manifest.files.map((f) => [f.name, f.rows]),
      [
        ['visitors.csv', 1_000],
        ['totals.json', 1],
      ],
    );

    const writes = writesUnder('nightly/');
    // Every put (probe, marker, pages and chunks, the export file, totals, manifest) carries a checksum.
    for (const write of writes) {
      assert.ok(
        write.checksumHeaders['x-amz-checksum-crc32'] ?? write.checksumHeaders['x-amz-trailer'],
        `${write.method} ${write.path} carries a CRC32 checksum`,
      );
    }
    const finalWrites = writes.filter((w) => w.method === 'PUT' && w.path.startsWith(`/exports/${folder}/`));
    assert.deepEqual(
      finalWrites.map((w) => w.path.slice(`/exports/${folder}/`.length)),
      ['visitors.csv', 'totals.json', 'manifest.json'],
    );
    // Every page is staged in a chunk (a lone page is a one-page chunk): at most one put per page, and one per
    // run past the end (at most concurrency - 1), which stages the empty page it found there.
    const stagedNames = writes
      .map((w) => /\.staging\/[^/]+\/(chunk-[^/]+\.ndjson)$/.exec(w.path)?.[1])
      .filter((name) => name !== undefined);
    assert.deepEqual(
      [...new Set(offsetsNamed(stagedNames, 50))].filter((offset) => offset < 1_000).sort((a, b) => a - b),
      Array.from({ length: 20 }, (_, i) => i * 50),
      'every page staged',
    );
    assert.ok(stagedNames.length <= 20 + 3, `${stagedNames.length} staging puts for 20 pages`);
  });

  test('docs-agent export run prints the s3:// URIs of the files', async () => {
    const range = ['--from', '2026-11-03', '--to', '2026-11-04'];
    const { code, stdout } = await cliExportRun(DEFAULT_TASK_QUEUE, '--project', 'cli', ...range);
    assert.equal(code, 0, stdout);
    const folder = 's3://exports/nightly/cli/2026-11-03_2026-11-04';
    assert.match(
      stdout,
      new RegExp(
        `^1000 rows in 4 pages\n${folder}/visitors.csv\n${folder}/totals.json\n${folder}/manifest.json$`,
        'm',
      ),
    );
  });

  test('S3 faults (500, 503 SlowDown, a reset mid-upload) on pages and merge: the export is whole', async () => {
    const { proxy } = s3();
    const onPut = (pattern: RegExp) => (r: { method: string; path: string }) =>
      r.method === 'PUT' && pattern.test(r.path);
    const prefix = 'faults/shaky';
    // The first page goes alone, as a one-page chunk; the others in runs (the budget has room).
    proxy.add({ kind: 'reset', match: onPut(/shaky.*\/chunk-0+-1-0+-1\.ndjson$/) });
    proxy.add({ kind: 'status', status: 500, match: onPut(/shaky.*\/chunk-[^/]+\.ndjson$/) });
    // Three in a row outlast the SDK's own three attempts: the write of a chunk of the last pages fails, and the
    // run writes it again from memory.
    const lastChunk = /shaky.*\/chunk-[^/]+\.ndjson$/;
    let doomed: string | undefined;
    proxy.add({
      kind: 'status',
      status: 503,
      times: 3,
      match: (r) => {
        if (!onPut(lastChunk)(r) || lastPageOf(r.path) < 500) return false;
        doomed ??= r.path;
        return r.path === doomed;
      },
    });
    proxy.add({ kind: 'reset', match: onPut(/shaky\/.*\/visitors\.csv$/) });
    proxy.add({ kind: 'status', status: 503, times: 3, match: onPut(/shaky\/.*\/manifest\.json$/) });

    const worker = await startTestWorker(stack().env, {
      service: stack().sim,
      taskQueue: 'export-s3-faults',
      extraDeps: s3Deps(s3(), prefix),
    });
    try {
      const result = await run(
        { projectId: 'shaky', ...RANGE, pageSize: 50, concurrency: 4 },
        'export-s3-faults',
      );
      assert.equal(result.rows, 1_000);
    } finally {
      await worker.stop();
    }
    const faults = proxy.requests().filter((r) => r.fault !== undefined && r.path.includes('/faults/'));
    assert.equal(faults.length, 9, 'every injected fault was hit');
    const refused = faults.filter((r) => r.fault === 'status' && r.path.includes('/chunk-')).at(-1)?.path;
    assert.ok(refused !== undefined, 'a chunk was refused');
    assert.ok(
      proxy.requests().some((r) => r.method === 'PUT' && r.path === refused && r.fault === undefined),
      'the refused chunk was written again',
    );
    const offsets = pageOffsets('shaky');
    assert.equal(new Set(offsets).size, offsets.length, `no page fetched twice: ${offsets.join(', ')}`);
    const folder = `${prefix}/shaky/2026-11-01_2026-11-02`;
    const { paths } = await readExport(folder);
    assert.equal(paths.length, 1_000, 'no missing row');
    assert.equal(new Set(paths).size, 1_000, 'no duplicate row');
    assert.deepEqual(await keysUnder(`${prefix}/`), [
      `${folder}/manifest.json`,
      `${folder}/totals.json`,
      `${folder}/visitors.csv`,
    ]);
  });

  test('a refusal mid-export (NoSuchBucket, AccessDenied) fails it at once: no page fetched twice, staging removed', async () => {
    const { proxy } = s3();
    for (const [code, status, reason] of [
      ['NoSuchBucket', 404, 'the bucket does not exist'],
      ['AccessDenied', 403, 'access denied: the credentials lack permission'],
    ] as const) {
      const projectId = `refused-${code.toLowerCase()}`;
      const staging = `nightly/.staging/visitors-export-${projectId}-`;
      // Past a chunk or two of the wide run: pages staged before it are no reason to fetch the others again.
      proxy.add({
        kind: 'status',
        status,
        code,
        times: Infinity,
        match: (r) => r.method === 'PUT' && r.path.includes(staging) && lastPageOf(r.path) >= 500,
      });
      try {
        await assert.rejects(run({ projectId, ...RANGE, pageSize: 50, concurrency: 4 }), (error: unknown) => {
          assert.ok(error instanceof WorkflowFailedError);
          const cause = error.cause?.cause;
          assert.ok(cause instanceof ApplicationFailure, String(cause));
          assert.equal(cause.type, 'ExportDestinationUnavailable');
          assert.match(
            cause.message,
            new RegExp(`refused PutObject: ${reason} \\(${code}, HTTP ${status}\\)`),
          );
          return true;
        });
      } finally {
        proxy.clear();
      }
      const offsets = pageOffsets(projectId);
      assert.ok(offsets.length > 1, code);
      assert.equal(
        new Set(offsets).size,
        offsets.length,
        `${code}: no page fetched twice: ${offsets.join(', ')}`,
      );
      assert.deepEqual(await keysUnder(staging), [], `${code}: staging removed`);
    }
  });

  test('the merge streams into a multipart upload: a reset part is sent again, an aborted one leaves nothing', async () => {
    const { proxy, moto } = s3();
    const destination = new S3Destination(
      { bucket: moto.bucket, prefix: 'multipart' },
      s3Deps(s3(), 'multipart').exportS3,
    );
    const line = `${'x'.repeat(1023)}\n`;
    proxy.add({
      kind: 'reset',
      afterBytes: 1 << 20,
      match: (r) => r.method === 'PUT' && r.query.get('partNumber') === '2',
    });
    const writer = await destination.openFinal('big.csv');
    for (let i = 0; i < 11 * 1024; i += 1) await writer.write(line);
    await writer.commit();
    const head = await s3().client.send(
      new HeadObjectCommand({ Bucket: moto.bucket, Key: 'multipart/big.csv', PartNumber: 1 }),
    );
    assert.equal(head.PartsCount, 3);
    const parts = proxy.requests().filter((r) => r.query.has('partNumber') && r.path.endsWith('/big.csv'));
    assert.ok(
      parts.every((r) => r.checksumHeaders['x-amz-checksum-crc32']),
      'every part carries its checksum',
    );
    assert.equal(parts.filter((r) => r.fault === 'reset').length, 1);
    const body = await s3().client.send(
      new GetObjectCommand({ Bucket: moto.bucket, Key: 'multipart/big.csv' }),
    );
    assert.equal((await body.Body?.transformToByteArray())?.length, 11 * 1024 * 1024);

    const aborted = await destination.openFinal('aborted.csv');
    for (let i = 0; i < 6 * 1024; i += 1) await aborted.write(line);
    await aborted.abort();
    assert.deepEqual(await keysUnder('multipart/aborted'), [], 'no object at the key');
    const uploads = await s3().client.send(
      new ListMultipartUploadsCommand({ Bucket: moto.bucket, Prefix: 'multipart/' }),
    );
    assert.deepEqual(uploads.Uploads ?? [], [], 'no upload left behind');
    destination.client.destroy();
  });
});

test('a chunk staged after its export was cleaned up fails and leaves no object behind', async () => {
  const destination = new S3Destination(
    { bucket: s3().bucket, prefix: 'late' },
    s3Deps(s3(), 'late').exportS3,
  );
  try {
    const staging = new ExportStaging(destination, 'visitors-export/late/k');
    await staging.prepare();
    await staging.writeChunk({ runOffset: 0, attempt: 1 }, [
      { offset: 0, rows: [{ path: '/a', human: 1, ai: 0, total: 1 }] },
    ]);
    assert.deepEqual(await staging.stagedPages([0, 250]), { found: false, missing: [250] });
    await staging.remove();
    const chunk = [{ offset: 250, rows: [{ path: '/b', human: 1, ai: 0, total: 1 }] }];
    await assert.rejects(staging.writeChunk({ runOffset: 250, attempt: 1 }, chunk), {
      type: 'ExportStagingMissing',
    });
    assert.deepEqual(await keysUnder('late/'), []);
  } finally {
    destination.client.destroy();
  }
});

test('listFinal lists the final objects under a prefix page after page; readFinal reads one or answers undefined', async () => {
  const { bucket, client, proxy } = s3();
  const destination = new S3Destination({ bucket, prefix: 'finals' }, s3Deps(s3(), 'finals').exportS3);
  try {
    // More keys than one ListObjectsV2 page holds (1,000).
    const keys = Array.from({ length: 1_001 }, (_, i) => `acme/${String(i).padStart(4, '0')}/manifest.json`);
    for (let i = 0; i < keys.length; i += 100) {
      const puts = keys.slice(i, i + 100).map((key) => ({ Bucket: bucket, Key: `finals/${key}`, Body: key }));
      await Promise.all(puts.map((put) => client.send(new PutObjectCommand(put))));
    }
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'finals-2/acme/manifest.json', Body: '{}' }),
    );
    await destination.writeFinal('project=acme/day=2026-11-01/manifest.json', '{"a":1}\n');
    await destination.writeFinal('.staging/finals-k/chunk.ndjson', '{}\n');

    assert.deepEqual(await destination.listFinal('acme/'), keys);
    const listings = proxy
      .requests()
      .filter(
        (r) =>
          r.method === 'GET' && r.query.get('list-type') === '2' && r.query.get('prefix') === 'finals/acme/',
      );
    assert.equal(listings.length, 2, 'two pages');
    assert.deepEqual(await destination.listFinal('project=acme/'), [
      'project=acme/day=2026-11-01/manifest.json',
    ]);
    assert.deepEqual(await destination.listFinal(''), [...keys, 'project=acme/day=2026-11-01/manifest.json']);

    assert.equal(await destination.readFinal('project=acme/day=2026-11-01/manifest.json'), '{"a":1}\n');
    assert.equal(await destination.readFinal('acme/1000/manifest.json'), 'acme/1000/manifest.json');
    assert.equal(await destination.readFinal('acme/1001/manifest.json'), undefined);
  } finally {
    destination.client.destroy();
  }
});

describe('a destination that cannot take the export', () => {
  before(() => s3().moto.checkAuth(true));
  after(() => s3().moto.checkAuth(false));
  const cases = (server: S3TestServer) => ({
    'a missing bucket': s3Deps(server, 'x', server.moto.writer, 'no-such-bucket'),
    'an unknown access key': s3Deps(server, 'x', {
      accessKeyId: 'AKIAUNKNOWN0000000000',
      secretAccessKey: 'wJalrXUtnFEMIK7MDENGbPxRfiCYunknown0000',
    }),
    'a wrong secret key': s3Deps(server, 'x', {
      ...server.moto.writer,
      secretAccessKey: 'wrong-secret-key-value',
    }),
    'credentials without permission to write': s3Deps(server, 'x', server.moto.reader),
  });

  test('fails the probe at once, non-retryable, naming the bucket and never the credentials', async () => {
    const reasons: Record<string, string> = {
      'a missing bucket': 'PutObject: the bucket does not exist',
      'an unknown access key': 'PutObject: the access key id is not known',
      'a wrong secret key': 'PutObject: the request signature does not match',
      'credentials without permission to write': 'PutObject: access denied',
    };
    for (const [name, deps] of Object.entries(cases(s3()))) {
      const reason = reasons[name] ?? '';
      const activities = createVisitorsExportActivities({ docsApi: stack().worker.docsApi, ...deps });
      const error = await new MockActivityEnvironment()
        .run(activities.prepareVisitorsExportStaging, 'probe')
        .then(() => undefined)
        .catch((e: unknown) => e);
      assert.ok(error instanceof ApplicationFailure, `${name}: ${String(error)}`);
      assert.equal(error.type, 'ExportDestinationUnavailable', name);
      assert.equal(error.nonRetryable, true, name);
      const bucket = deps.exportDir.split('/')[2] ?? '';
      assert.match(error.message, new RegExp(`^export destination s3://${bucket}/x refused ${reason}`), name);
      const { accessKeyId, secretAccessKey } = deps.exportS3.clientConfig.credentials;
      assert.ok(!error.message.includes(accessKeyId) && !error.message.includes(secretAccessKey), name);
    }
  });

  test('finding manifests fails naming the destination and never the credentials; read-only keys find them', async () => {
    const reasons: Record<string, string> = {
      'a missing bucket': 'the bucket does not exist',
      'an unknown access key': 'the access key id is not known',
      'a wrong secret key': 'the request signature does not match',
    };
    for (const [name, deps] of Object.entries(cases(s3()))) {
      const bucket = deps.exportDir.split('/')[2] ?? '';
      // No prefix, and none listed with a '/': moto's signature check refuses a listing prefix with one.
      const destination = new S3Destination({ bucket, prefix: '' }, deps.exportS3);
      try {
        const reason = reasons[name];
        if (reason === undefined) {
          assert.deepEqual(await destination.listFinal('acme'), [], name);
          assert.equal(await destination.readFinal('acme/manifest.json'), undefined, name);
          continue;
        }
        const { accessKeyId, secretAccessKey } = deps.exportS3.clientConfig.credentials;
        for (const [operation, find] of [
          ['ListObjectsV2', () => destination.listFinal('acme')],
          ['GetObject', () => destination.readFinal('acme/manifest.json')],
        ] as const) {
          await assert.rejects(find(), (error: unknown) => {
            assert.ok(
              error instanceof ApplicationFailure && error.type === 'ExportDestinationUnavailable',
              `${name}: ${String(error)}`,
            );
            const refused = `^export destination s3://${bucket} refused ${operation}: ${reason}`;
            assert.match(error.message, new RegExp(refused), name);
            assert.ok(!error.message.includes(accessKeyId) && !error.message.includes(secretAccessKey), name);
            return true;
          });
        }
      } finally {
        destination.client.destroy();
      }
    }
  });

  test('an export with wrong credentials fails before any page or budget permit, with the typed failure', async () => {
    const deps = cases(s3())['a wrong secret key'];
    const worker = await startTestWorker(stack().env, {
      service: stack().sim,
      taskQueue: 'export-s3-denied',
      extraDeps: deps,
    });
    const input = { projectId: 'denied', ...RANGE };
    const started = Date.now();
    try {
      await assert.rejects(run(input, 'export-s3-denied'), (error: unknown) => {
        assert.ok(error instanceof WorkflowFailedError);
        assert.ok(error.cause instanceof ActivityFailure);
        const cause = error.cause.cause;
        assert.ok(cause instanceof ApplicationFailure);
        assert.equal(cause.type, 'ExportDestinationUnavailable');
        assert.match(cause.message, /s3:\/\/exports\/x refused PutObject: the request signature/);
        return true;
      });
    } finally {
      await worker.stop();
    }
    assert.ok(Date.now() - started < 15_000, 'failed at once, without retries');
    assert.equal(
      stack()
        .sim.requests()
        .filter((r) => r.projectId === 'denied').length,
      0,
      'no page fetched',
    );
    const handle = stack().client.workflow.getHandle(
      visitorsExportWorkflowId('denied', RANGE.dateFrom, RANGE.dateTo),
    );
    const history = JSON.stringify(await handle.fetchHistory());
    assert.ok(!/fetchVisitorsPage|requestBudgetPermit|docsBudgetLimiter/.test(history), 'no page, no permit');
    const { accessKeyId, secretAccessKey } = deps.exportS3.clientConfig.credentials;
    assert.ok(
      !history.includes(accessKeyId) && !history.includes(secretAccessKey),
      'no credential in history',
    );
  });
});
