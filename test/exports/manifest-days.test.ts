import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ExportLayout, VisitorsExportManifest } from '../../src/contract/visitors-export';
import { addDays } from '../../src/contract/zone-days';
import { finishExportFolder } from '../../src/exports/export-files';
import { exportFolderKey } from '../../src/exports/layout';
import { LocalDestination } from '../../src/exports/local-destination';
import { wholeDaysInManifests } from '../../src/exports/manifest-days';
import { tempDir } from '../helpers/temp-dir';

interface Export {
  projectId?: string;
  dateFrom: string;
  dateTo?: string;
  timeZone?: string;
  layout?: ExportLayout;
  partial?: true;
}

/** An export's folder finished as the merge finishes it (totals.json, then manifest.json); returns the folder. */
async function exported(destination: LocalDestination, e: Export): Promise<string> {
  const projectId = e.projectId ?? 'acme';
  const dateTo = e.dateTo ?? addDays(e.dateFrom, 1);
  const folder = exportFolderKey(projectId, e.dateFrom, dateTo, e.timeZone, e.layout, e.partial === true);
  const manifest: VisitorsExportManifest = {
    projectId,
    range: {
      dateFrom: e.dateFrom,
      dateTo,
      dateToExclusive: true,
      ...(e.timeZone === undefined ? {} : { timeZone: e.timeZone }),
    },
    ...(e.partial ? { partial: true as const } : {}),
    file: 'visitors.csv',
    format: 'csv',
    rows: 0,
    pages: 1,
    sha256: '0'.repeat(64),
    files: [],
    totals: { human: 0, ai: 0, total: 0 },
    warnings: [],
    generatedAt: '2026-11-20T00:00:00.000Z',
    workflowId: 'w',
    runId: 'r',
  };
  await destination.writeFinal(`${folder}/visitors.csv`, 'path,human,ai,total\n');
  await finishExportFolder(destination, folder, manifest);
  return folder;
}

describe('wholeDaysInManifests', () => {
  test('a day counts from the manifest of its whole export, in either layout, of the project and zone', async () => {
    const destination = new LocalDestination(await tempDir('manifest-days'));
    await exported(destination, { dateFrom: '2026-11-01' });
    await exported(destination, { dateFrom: '2026-11-02', layout: 'hive' });
    await exported(destination, { dateFrom: '2026-11-03', timeZone: 'UTC' });
    // Not whole days of acme in UTC: partial (both layouts), another zone, a range, another project.
    await exported(destination, { dateFrom: '2026-11-04', partial: true });
    await exported(destination, { dateFrom: '2026-11-05', layout: 'hive', partial: true });
    await exported(destination, { dateFrom: '2026-11-06', timeZone: 'Europe/Paris' });
    await exported(destination, { dateFrom: '2026-11-07', layout: 'hive', timeZone: 'Europe/Paris' });
    await exported(destination, { dateFrom: '2026-11-08', dateTo: '2026-11-10' });
    await exported(destination, { dateFrom: '2026-11-08', dateTo: '2026-11-10', layout: 'hive' });
    await exported(destination, { projectId: 'acme-2', dateFrom: '2026-11-11' });
    await exported(destination, { dateFrom: '2026-11-12', dateTo: '2026-11-12T12:00:00Z' });

    const utc = { projectId: 'acme', timeZone: 'UTC', after: null, through: '2026-11-30' };
    assert.deepEqual(await wholeDaysInManifests(destination, utc), {
      days: ['2026-11-01', '2026-11-02', '2026-11-03'],
      warnings: [],
    });
    const paris = { ...utc, timeZone: 'Europe/Paris' };
    assert.deepEqual((await wholeDaysInManifests(destination, paris)).days, ['2026-11-06', '2026-11-07']);
    const other = { ...utc, projectId: 'acme-2' };
    assert.deepEqual((await wholeDaysInManifests(destination, other)).days, ['2026-11-11']);
  });

  test('only the days after `after` up to `through` are looked for', async () => {
    const destination = new LocalDestination(await tempDir('manifest-days'));
    for (const day of ['2026-11-01', '2026-11-02', '2026-11-03', '2026-11-04']) {
      await exported(destination, { dateFrom: day, layout: day === '2026-11-03' ? 'hive' : 'default' });
    }
    const days = await wholeDaysInManifests(destination, {
      projectId: 'acme',
      timeZone: 'UTC',
      after: '2026-11-01',
      through: '2026-11-03',
    });
    assert.deepEqual(days, { days: ['2026-11-02', '2026-11-03'], warnings: [] });
  });

  test("a manifest that does not show its folder's whole day is skipped with a warning, never fatal", async () => {
    const dir = await tempDir('manifest-days');
    const destination = new LocalDestination(dir);
    await exported(destination, { dateFrom: '2026-11-01' });
    const broken = await exported(destination, { dateFrom: '2026-11-02' });
    await destination.writeFinal(`${broken}/manifest.json`, '{"projectId": "acme", "ran');
    const notOne = await exported(destination, { dateFrom: '2026-11-03', layout: 'hive' });
    await destination.writeFinal(`${notOne}/manifest.json`, '{"projectId": "acme", "range": {}}');
    const rewritten = async (dateFrom: string, change: object): Promise<void> => {
      const key = `${await exported(destination, { dateFrom })}/manifest.json`;
      const manifest = JSON.parse((await destination.readFinal(key)) ?? '') as object;
      await destination.writeFinal(key, JSON.stringify({ ...manifest, ...change }));
    };
    await rewritten('2026-11-04', { partial: true });
    await rewritten('2026-11-05', { range: { dateFrom: '2026-11-20', dateTo: '2026-11-21' } });
    await rewritten('2026-11-07', { projectId: 'acme-2' });
    await exported(destination, { dateFrom: '2026-11-06' });

    const found = await wholeDaysInManifests(destination, {
      projectId: 'acme',
      timeZone: 'UTC',
      after: null,
      through: '2026-11-10',
    });
    assert.deepEqual(found.days, ['2026-11-01', '2026-11-06']);
    assert.deepEqual(found.warnings, [
      `${dir}/acme/2026-11-02_2026-11-03/manifest.json skipped (not valid JSON): 2026-11-02 is due again`,
      `${dir}/acme/2026-11-04_2026-11-05/manifest.json skipped (a partial export): 2026-11-04 is due again`,
      `${dir}/acme/2026-11-05_2026-11-06/manifest.json skipped (of 2026-11-20 → 2026-11-21): 2026-11-05 is due again`,
      `${dir}/acme/2026-11-07_2026-11-08/manifest.json skipped (of project acme-2): 2026-11-07 is due again`,
      `${dir}/project=acme/day=2026-11-03/manifest.json skipped (not a manifest: range.dateFrom: ` +
        'Invalid input: expected string, received undefined): 2026-11-03 is due again',
    ]);
  });
});
