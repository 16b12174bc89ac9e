import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ExportLayout, VisitorsExportManifest } from '../../src/contract/visitors-export';
import { addDays } from '../../src/contract/zone-days';
import { exportFolderKey } from '../../src/exports/layout';
import { LocalDestination } from '../../src/exports/local-destination';
import { finishExportFolder, wholeExports } from '../../src/exports/manifest-days';
import { dayStart } from '../../src/contract/zone-days';
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
    files: [{ name: 'visitors.csv', rows: 0, bytes: 20, sha256: '0'.repeat(64) }],
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

/** The instants of a day of a zone, as wholeExports reports them. */
const day = (date: string, zone = 'UTC') => ({
  from: dayStart(date, zone).instant,
  to: dayStart(addDays(date, 1), zone).instant,
});

describe("wholeExports: the nightly export's record of done days", () => {
  test('days of every zone in either layout and date-time ranges count; partial, day ranges, other projects do not', async () => {
    const destination = new LocalDestination(await tempDir('manifest-days'));
    await exported(destination, { dateFrom: '2026-11-01' });
    await exported(destination, { dateFrom: '2026-11-02', layout: 'hive' });
    await exported(destination, { dateFrom: '2026-11-03', timeZone: 'UTC' });
    await exported(destination, { dateFrom: '2026-11-04', partial: true });
    await exported(destination, { dateFrom: '2026-11-05', layout: 'hive', partial: true });
    await exported(destination, { dateFrom: '2026-11-06', timeZone: 'Europe/Paris' });
    await exported(destination, { dateFrom: '2026-11-07', layout: 'hive', timeZone: 'Europe/Paris' });
    await exported(destination, { dateFrom: '2026-11-08', dateTo: '2026-11-10' });
    await exported(destination, { dateFrom: '2026-11-08', dateTo: '2026-11-10', layout: 'hive' });
    await exported(destination, { projectId: 'acme-2', dateFrom: '2026-11-11' });
    const bridge = { dateFrom: '2026-11-12T00:00:00-08:00', dateTo: '2026-11-13T00:00:00+00:00' };
    await exported(destination, { ...bridge, layout: 'hive' });

    const found = await wholeExports(destination, 'acme', '2026-11-01', '2026-11-30');
    const sorted = [...found.covered].sort((a, b) => a.from - b.from);
    assert.deepEqual(sorted, [
      day('2026-11-01'),
      day('2026-11-02'),
      day('2026-11-03'),
      day('2026-11-06', 'Europe/Paris'),
      day('2026-11-07', 'Europe/Paris'),
      { from: Date.parse('2026-11-12T08:00:00Z'), to: Date.parse('2026-11-13T00:00:00Z') },
    ]);
    assert.deepEqual(found.warnings, []);
    assert.equal(found.olderExports, false);
    const later = await wholeExports(destination, 'acme', '2026-11-03', '2026-11-06');
    assert.deepEqual(later.covered.length, 2, 'only the folders of the days asked for are read');
    assert.equal(later.olderExports, true);
  });

  test("a manifest that does not show its folder's whole export is skipped with a warning, never fatal", async () => {
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
    const gone = await exported(destination, { dateFrom: '2026-11-08' });
    await destination.removeFinal(`${gone}/visitors.csv`);

    const found = await wholeExports(destination, 'acme', '2026-11-01', '2026-11-10');
    assert.deepEqual(found.covered, [day('2026-11-01'), day('2026-11-06')]);
    const skipped = (folder: string, why: string) =>
      `${dir}/${folder}/manifest.json skipped (${why}): its hours are due`;
    assert.deepEqual(found.warnings.sort(), [
      skipped('acme/2026-11-02_2026-11-03', 'not valid JSON'),
      skipped('acme/2026-11-04_2026-11-05', 'a partial export'),
      skipped('acme/2026-11-05_2026-11-06', 'of 2026-11-20 → 2026-11-21, not of its folder'),
      skipped('acme/2026-11-07_2026-11-08', 'of project acme-2'),
      skipped('acme/2026-11-08_2026-11-09', 'visitors.csv is missing'),
      skipped(
        'project=acme/day=2026-11-03',
        'not a manifest: range.dateFrom: Invalid input: expected string, received undefined',
      ),
    ]);
  });
});
