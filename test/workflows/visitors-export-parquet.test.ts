import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import type {
  VisitorRow,
  VisitorsExportInput,
  VisitorsExportManifest,
  VisitorsExportResult,
} from '../../src/contract/visitors-export';
import { DocsApiClient } from '../../src/docs-api/client';
import { exportFolderKey } from '../../src/exports/layout';
import { visitorsExport } from '../../src/workflows';
import { startStack } from '../../dev/stack';
import { startTestWorker, type TestWorker } from '../../dev/worker';
import { duckdbQuery, duckdbRow, readWithPython } from '../helpers/export-readers';
import { useS3Stack } from '../helpers/s3';

// A month of nightly Parquet exports as the schedule makes them: one visitorsExport per day of the zone, for two
// projects, written as EXPORT_DIR's default Parquet layout (hive), then read by DuckDB in one query.
const ZONE = 'Europe/Paris';
const PROJECTS = { 'acme-docs': 620, 'beta-site': 260 } as const;
const DAYS = Array.from({ length: 30 }, (_, i) =>
  new Date(Date.UTC(2026, 9, 12 + i)).toISOString().slice(0, 10),
);
const S3_DAYS = DAYS.slice(12, 17); // 2026-10-24 to 2026-10-28: the night Paris leaves summer time among them
const S3_QUEUE = 'parquet-s3';
const STARTER = path.resolve(__dirname, '../../src/starter.ts');
const S3_PREFIX = 'analytics';

let s3Worker: TestWorker | undefined;
const { s3, stack } = useS3Stack(async (server) => {
  const started = await startStack({ name: 'export-parquet', simulator: { analytics: { paths: 300 } } });
  for (const [projectId, visitorPaths] of Object.entries(PROJECTS)) {
    started.sim.configureProject(projectId, { visitorPaths });
  }
  s3Worker = await startTestWorker(started.env, {
    service: started.sim,
    taskQueue: S3_QUEUE,
    extraDeps: {
      exportDir: `s3://${server.bucket}/${S3_PREFIX}`,
      exportS3: {
        forcePathStyle: true,
        clientConfig: { endpoint: server.moto.url, region: 'us-east-1', credentials: server.moto.writer },
      },
    },
  });
  return {
    ...started,
    async stop() {
      await s3Worker?.stop();
      await started.stop();
    },
  };
});

const nextDay = (day: string) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

/** The zone's day exports of every project, a few at a time (as the nightly children of several projects). */
async function exportDays(days: readonly string[], taskQueue: string): Promise<VisitorsExportResult[]> {
  const inputs: VisitorsExportInput[] = Object.keys(PROJECTS).flatMap((projectId) =>
    days.map((day) => ({
      projectId,
      dateFrom: day,
      dateTo: nextDay(day),
      timeZone: ZONE,
      format: 'parquet',
    })),
  );
  const results: VisitorsExportResult[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      for (let i = next++; i < inputs.length; i = next++) {
        const input = inputs[i] as VisitorsExportInput & { dateFrom: string; dateTo: string };
        results.push(
          await stack().client.workflow.execute(visitorsExport, {
            taskQueue,
            workflowId: `${visitorsExportWorkflowId(input.projectId, input.dateFrom, input.dateTo, ZONE)}/${taskQueue}`,
            args: [input],
          }),
        );
      }
    }),
  );
  return results;
}

/** What the simulator serves for the range the export requested (its manifest says which), every page of it. */
async function served(manifest: VisitorsExportManifest): Promise<VisitorRow[]> {
  const docsApi = new DocsApiClient({ baseUrl: stack().sim.url, apiKey: stack().sim.apiKey });
  const range = manifest.range.requested ?? manifest.range;
  const rows: VisitorRow[] = [];
  try {
    for (let offset = 0; ; offset += 250) {
      const page = await docsApi.getVisitors(manifest.projectId, { ...range, limit: 250, offset });
      rows.push(...page.visitors);
      if (!page.hasMore) return rows;
    }
  } finally {
    await docsApi.close();
  }
}

type DayCount = [project: string, day: string, zone: string, rows: number, total: number];

/** (project, day, zone, rows, sum of total) of what the simulator serves for each export, ordered as DuckDB orders. */
async function expectedCounts(
  days: readonly string[],
  manifestOf: (projectId: string, day: string) => Promise<VisitorsExportManifest>,
): Promise<DayCount[]> {
  const counts: DayCount[] = [];
  for (const projectId of Object.keys(PROJECTS)) {
    for (const day of days) {
      const rows = await served(await manifestOf(projectId, day));
      counts.push([projectId, day, 'Europe-Paris', rows.length, rows.reduce((sum, r) => sum + r.total, 0)]);
    }
  }
  return counts;
}

const MONTH_QUERY = (root: string) => `
  SELECT project, day::VARCHAR, zone, count(*), sum(total)
  FROM read_parquet('${root}/**/*.parquet', hive_partitioning = true)
  GROUP BY ALL ORDER BY ALL`;

describe('Parquet exports read where they land', () => {
  test('a month of two projects in Europe/Paris reads with one DuckDB query, day by day', async () => {
    const results = await exportDays(DAYS, DEFAULT_TASK_QUEUE);
    const root = stack().exportDir;
    const manifests = new Map<string, VisitorsExportManifest>();
    for (const result of results) {
      const folder = exportFolderKey(result.projectId, result.dateFrom, result.dateTo, ZONE, 'hive');
      assert.deepEqual(
        result.files.map((file) => path.relative(root, file)),
        ['visitors.parquet', 'totals.json', 'manifest.json'].map((name) => `${folder}/${name}`),
      );
      const manifest = JSON.parse(
        await fs.readFile(path.join(root, folder, 'manifest.json'), 'utf8'),
      ) as VisitorsExportManifest;
      assert.equal(manifest.format, 'parquet');
      manifests.set(`${result.projectId} ${result.dateFrom}`, manifest);
    }

    const counts = await duckdbQuery<DayCount>(MONTH_QUERY(root));
    const expected = await expectedCounts(DAYS, (projectId, day) => {
      const manifest = manifests.get(`${projectId} ${day}`);
      assert.ok(manifest, `${projectId} ${day} exported`);
      return Promise.resolve(manifest);
    });
    // Every (project, day) once with the rows the service answered: no day missing, none doubled.
    assert.deepEqual(counts, expected);

    // Sampled paths: their values and the day column inside the file, against the service's answer.
    const sample = manifests.get(`acme-docs ${DAYS[20]}`) as VisitorsExportManifest;
    const servedRows = await served(sample);
    const picks = [0, 101, 333, servedRows.length - 1].map((i) => servedRows[i] as VisitorRow);
    const found = await duckdbQuery<[string, number, number, number, string]>(`
      SELECT path, human, ai, total, day::VARCHAR
      FROM read_parquet('${root}/**/*.parquet', hive_partitioning = true)
      WHERE project = 'acme-docs' AND day = DATE '${DAYS[20]}'
        AND path IN (${picks.map((r) => `'${r.path}'`).join(', ')})
      ORDER BY path`);
    assert.deepEqual(
      found,
      picks
        .map((r): [string, number, number, number, string] => [
          r.path,
          r.human,
          r.ai,
          r.total,
          DAYS[20] as string,
        ])
        .sort((a, b) => a[0].localeCompare(b[0])),
    );
  });

  test('`docs-agent export run --format parquet` writes a hive folder of a range', async () => {
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      const argv = [
        '--project',
        'beta-site',
        '--from',
        '2026-09-01',
        '--to',
        '2026-09-08',
        '--format',
        'parquet',
      ];
      execFile(
        process.execPath,
        ['--import', 'tsx', STARTER, 'export', 'run', ...argv],
        {
          env: {
            PATH: process.env.PATH ?? '',
            TEMPORAL_ADDRESS: stack().env.address,
            TEMPORAL_NAMESPACE: 'default',
            TEMPORAL_TASK_QUEUE: DEFAULT_TASK_QUEUE,
          },
        },
        (error, out) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out }),
      );
    });
    assert.equal(code, 0, stdout);
    const file = path.join(
      stack().exportDir,
      'ranges/project=beta-site/from=2026-09-01/to=2026-09-08/visitors.parquet',
    );
    assert.ok(stdout.includes(file), stdout);
    const [rows, days] = await duckdbRow<[number, string]>(
      `SELECT count(*), string_agg(DISTINCT date_from::VARCHAR || '/' || date_to::VARCHAR) FROM read_parquet('${file}')`,
    );
    const manifest = JSON.parse(
      await fs.readFile(path.join(path.dirname(file), 'manifest.json'), 'utf8'),
    ) as VisitorsExportManifest;
    assert.equal(rows, (await served(manifest)).length);
    assert.equal(days, '2026-09-01/2026-09-08');
  });

  test('the same query over the bucket: pyarrow reads it through its S3 filesystem, DuckDB queries that', async () => {
    const results = await exportDays(S3_DAYS, S3_QUEUE);
    assert.ok(results.every((r) => r.files[0]?.startsWith(`s3://${s3().bucket}/${S3_PREFIX}/project=`)));
    const listed = await s3().client.send(
      new ListObjectsV2Command({ Bucket: s3().bucket, Prefix: S3_PREFIX }),
    );
    const keys = (listed.Contents ?? []).map((object) => object.Key ?? '');
    assert.equal(keys.filter((key) => key.endsWith('/visitors.parquet')).length, results.length);
    assert.deepEqual(
      keys.filter((key) => key.includes('.staging/') && !key.endsWith('.prepared')),
      [],
    );

    const { writer } = s3().moto;
    const counts = await readWithPython<DayCount[]>(
      `
import json, sys, duckdb
import pyarrow as pa
import pyarrow.dataset as ds
from pyarrow import fs
s3 = fs.S3FileSystem(endpoint_override=sys.argv[1], access_key=sys.argv[2], secret_key=sys.argv[3],
                     region='us-east-1', scheme='http')
files = [f.path for f in s3.get_file_info(fs.FileSelector(sys.argv[4], recursive=True))
         if f.path.endswith('.parquet')]
# The files carry day as a date: the folders' day= is typed the same, so that the two merge.
hive = ds.partitioning(pa.schema([('project', pa.string()), ('day', pa.date32()), ('zone', pa.string())]),
                       flavor='hive')
visitors = ds.dataset(files, filesystem=s3, format='parquet', partitioning=hive, partition_base_dir=sys.argv[4])
rows = duckdb.sql("""SELECT project, day::VARCHAR, zone, count(*), sum(total) FROM visitors
                     GROUP BY ALL ORDER BY ALL""").fetchall()
print(json.dumps(rows, default=str))
`,
      s3().moto.url.replace(/^http:\/\//, ''),
      writer.accessKeyId,
      writer.secretAccessKey,
      `${s3().bucket}/${S3_PREFIX}`,
    );
    const expected = await expectedCounts(S3_DAYS, async (projectId, day) => {
      const folder = exportFolderKey(projectId, day, nextDay(day), ZONE, 'hive');
      const key = `${S3_PREFIX}/${folder}/manifest.json`;
      const object = await s3().client.send(new GetObjectCommand({ Bucket: s3().bucket, Key: key }));
      return JSON.parse((await object.Body?.transformToString('utf8')) ?? '') as VisitorsExportManifest;
    });
    assert.deepEqual(counts, expected);
  });
});
