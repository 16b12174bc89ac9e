import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach } from 'node:test';
import { createVisitorsExportActivities } from '../../src/activities/visitors-export';
import { DocsApiClient } from '../../src/docs-api/client';
import { startSimulator, type Simulator } from '../../dev/simulator';

export interface ExportActivitiesFixture {
  readonly sim: Simulator;
  readonly docsApi: DocsApiClient;
  /** A fresh temporary EXPORT_DIR per test. */
  readonly exportDir: string;
  readonly activities: ReturnType<typeof createVisitorsExportActivities>;
}

/**
 * The export activities of one test file, for MockActivityEnvironment: a simulator serving `paths` visitor paths
 * (reset after each test), and the activities over a fresh temporary export directory per test.
 */
export function useExportActivities(paths: number): ExportActivitiesFixture {
  let sim: Simulator | undefined;
  let docsApi: DocsApiClient | undefined;
  let exportDir: string | undefined;
  let activities: ReturnType<typeof createVisitorsExportActivities> | undefined;
  before(async () => {
    sim = await startSimulator({ analytics: { paths } });
    docsApi = new DocsApiClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  });
  beforeEach(async () => {
    exportDir = await fs.mkdtemp(path.join(os.tmpdir(), 'export-activities-'));
    activities = createVisitorsExportActivities({ docsApi: ready(docsApi), exportDir });
  });
  afterEach(async () => {
    sim?.reset();
    if (exportDir !== undefined) await fs.rm(exportDir, { recursive: true, force: true });
  });
  after(async () => {
    await docsApi?.close();
    await sim?.close();
  });
  return {
    get sim() {
      return ready(sim);
    },
    get docsApi() {
      return ready(docsApi);
    },
    get exportDir() {
      return ready(exportDir);
    },
    get activities() {
      return ready(activities);
    },
  };
}

function ready<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('used outside a test of the file');
  return value;
}
