import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startSimulator } from '../../../dev/simulator';
import { api, asError, asPage, manualClock, type VisitorsJson } from './http-client';
import { useSimulator } from './use-simulator';

const clock = manualClock(Date.UTC(2026, 10, 20, 15, 30));
const DAY = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
// The older 'detailed' error bodies name the parameter at fault (`field`) beside a code.
const h = useSimulator({ clock: clock.now, errorBodies: 'detailed' });

/** Every page of a range, asserting that each answers 200 and carries the same totals. */
async function allPages(
  projectId: string,
  query: Record<string, string | number>,
  limit: number,
): Promise<{ pages: VisitorsJson[]; rows: VisitorsJson['visitors'] }> {
  const pages: VisitorsJson[] = [];
  for (let offset = 0; ; offset += limit) {
    const answer = await h.ops.visitors(projectId, { ...query, limit, offset });
    assert.equal(answer.status, 200, answer.text);
    const page = asPage(answer);
    pages.push(page);
    if (!page.hasMore) break;
  }
  for (const page of pages) assert.deepEqual(page.totals, pages[0]?.totals);
  return { pages, rows: pages.flatMap((p) => p.visitors) };
}

function assertDedupeBound(counts: { human: number; ai: number; total: number }): void {
  assert.ok(Number.isInteger(counts.human) && Number.isInteger(counts.ai) && Number.isInteger(counts.total));
  assert.ok(counts.total >= Math.max(counts.human, counts.ai), JSON.stringify(counts));
  assert.ok(counts.total <= counts.human + counts.ai, JSON.stringify(counts));
}

describe('pagination', () => {
  test('0 paths: empty totals, no rows, no more', async () => {
    h.sim.configureProject('empty', { visitorPaths: 0 });
    const answer = await h.ops.visitors('empty', DAY);
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json, { totals: { human: 0, ai: 0, total: 0 }, visitors: [], hasMore: false });
  });

  test('default limit 50 and a partial last page (120 paths)', async () => {
    const first = asPage(await h.ops.visitors('p1', DAY));
    assert.equal(first.visitors.length, 50);
    assert.equal(first.hasMore, true);
    const { pages, rows } = await allPages('p1', DAY, 50);
    assert.deepEqual(
      pages.map((p) => [p.visitors.length, p.hasMore]),
      [
        [50, true],
        [50, true],
        [20, false],
      ],
    );
    assert.equal(rows.length, 120);
    assert.deepEqual(first.visitors, pages[0]?.visitors);
  });

  test('an exact multiple: the last full page has hasMore false; past the end is empty', async () => {
    h.sim.configureProject('exact', { visitorPaths: 100 });
    const { pages } = await allPages('exact', DAY, 50);
    assert.deepEqual(
      pages.map((p) => [p.visitors.length, p.hasMore]),
      [
        [50, true],
        [50, false],
      ],
    );
    const beyond = asPage(await h.ops.visitors('exact', { ...DAY, limit: 50, offset: 100 }));
    assert.deepEqual(beyond.visitors, []);
    assert.equal(beyond.hasMore, false);
    assert.deepEqual(beyond.totals, pages[0]?.totals);
  });

  test('10,000 paths paged by 250: every row once, in a stable order, totals equal and deduplicated', async () => {
    h.sim.configureProject('big', { visitorPaths: 10_000 });
    const range = { dateFrom: '2026-10-01', dateTo: '2026-11-01' };
    const { pages, rows } = await allPages('big', range, 250);
    assert.equal(pages.length, 40);
    assert.equal(rows.length, 10_000);
    const paths = rows.map((r) => r.path);
    assert.equal(new Set(paths).size, 10_000);
    assert.deepEqual(paths, [...paths].sort());
    for (const row of rows) {
      assert.match(row.path, /^\/\w+\/page-\d{6}$/);
      assert.ok(row.total > 0);
      assertDedupeBound(row);
    }
    const totals = pages[0]?.totals ?? { human: 0, ai: 0, total: 0 };
    assertDedupeBound(totals);
    const sum = (key: 'human' | 'ai' | 'total') => rows.reduce((s, r) => s + r[key], 0);
    const max = (key: 'human' | 'ai' | 'total') => Math.max(...rows.map((r) => r[key]));
    for (const key of ['human', 'ai', 'total'] as const) {
      assert.ok(totals[key] <= sum(key), `site-wide ${key} uniques are at most the sum over paths`);
      assert.ok(totals[key] >= max(key), `site-wide ${key} uniques are at least those of any path`);
    }
  });

  test('100,000 paths in 400 pages of 250 is served quickly', { timeout: 12_000 }, async () => {
    h.sim.configureProject('huge', { visitorPaths: 100_000 });
    const started = Date.now();
    const { pages, rows } = await allPages('huge', DAY, 250);
    assert.equal(pages.length, 400);
    assert.equal(rows.length, 100_000);
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  });
});

describe('date ranges', () => {
  test('dateTo is exclusive: a two-day range is the sum of its two one-day ranges', async () => {
    const day1 = (await allPages('p1', { dateFrom: '2026-11-01', dateTo: '2026-11-02' }, 250)).rows;
    const day2 = (await allPages('p1', { dateFrom: '2026-11-02', dateTo: '2026-11-03' }, 250)).rows;
    const both = (await allPages('p1', { dateFrom: '2026-11-01', dateTo: '2026-11-03' }, 250)).rows;
    assert.notDeepEqual(day1, day2);
    assert.notDeepEqual(both, day1, 'dateTo is exclusive: the second day adds visitors');
    assert.equal(both.length, day1.length);
    for (const [i, row] of both.entries()) assert.ok(row.total > (day1[i]?.total ?? Infinity), row.path);
    const byPath = new Map(day2.map((r) => [r.path, r]));
    assert.deepEqual(
      both,
      day1.map((r) => {
        const other = byPath.get(r.path);
        assert.ok(other);
        return {
          path: r.path,
          human: r.human + other.human,
          ai: r.ai + other.ai,
          total: r.total + other.total,
        };
      }),
    );
  });

  test('dateTo is exclusive at the day boundary: up to 00:00 of the next day is one day, not two', async () => {
    const oneDay = await h.ops.visitors('p1', { dateFrom: '2026-11-01', dateTo: '2026-11-02', limit: 250 });
    const twoDays = await h.ops.visitors('p1', { dateFrom: '2026-11-01', dateTo: '2026-11-03', limit: 250 });
    assert.equal(oneDay.status, 200);
    assert.equal(twoDays.status, 200);
    const one = asPage(oneDay);
    const two = asPage(twoDays);
    assert.ok(two.totals.human > one.totals.human && two.totals.total > one.totals.total);
    assert.notDeepEqual(one.visitors, two.visitors);
  });

  test('date-times are accepted; midnight UTC in any notation is the same bound', async () => {
    const plain = asPage(await h.ops.visitors('p1', { ...DAY, limit: 250 }));
    for (const [dateFrom, dateTo] of [
      ['2026-11-01T00:00:00Z', '2026-11-02T00:00:00.000Z'],
      ['2026-11-01T01:00:00+01:00', '2026-11-01T19:00:00-05:00'],
      ['2026-11-01T00:00:00', '2026-11-02T00:00:00'],
    ] as const) {
      const answer = await h.ops.visitors('p1', { dateFrom, dateTo, limit: 250 });
      assert.equal(answer.status, 200, `${dateFrom} ${dateTo}: ${answer.text}`);
      assert.deepEqual(asPage(answer), plain, `${dateFrom} .. ${dateTo}`);
    }
  });

  test('paths with no visitors in the range are omitted (pages went live over time)', async () => {
    h.sim.configureProject('history', { visitorPaths: 500 });
    const early = await allPages('history', { dateFrom: '2022-03-01', dateTo: '2022-03-02' }, 250);
    assert.ok(early.rows.length > 0 && early.rows.length < 500, `${early.rows.length} rows`);
    assert.ok(early.rows.every((r) => r.total > 0));
    const ancient = asPage(await h.ops.visitors('history', { dateFrom: '2015-01-01', dateTo: '2015-02-01' }));
    assert.deepEqual(ancient, { totals: { human: 0, ai: 0, total: 0 }, visitors: [], hasMore: false });
  });

  test('without dates: the last 30 full UTC days', async () => {
    const implicit = asPage(await h.ops.visitors('p1', { limit: 250 }));
    const explicit = asPage(
      await h.ops.visitors('p1', { dateFrom: '2026-10-21', dateTo: '2026-11-20', limit: 250 }),
    );
    assert.deepEqual(implicit, explicit);
    const onlyTo = asPage(await h.ops.visitors('p1', { dateTo: '2026-11-20', limit: 250 }));
    assert.deepEqual(onlyTo, explicit);
    const onlyFrom = asPage(await h.ops.visitors('p1', { dateFrom: '2026-10-21', limit: 250 }));
    assert.deepEqual(onlyFrom, explicit);
  });
});

describe('determinism', () => {
  test('two simulators with the same seed answer identically; another seed differs', async () => {
    const twin = await startSimulator({ clock: clock.now });
    const other = await startSimulator({ clock: clock.now, analytics: { seed: 'other' } });
    try {
      const query = { dateFrom: '2026-10-01', dateTo: '2026-11-01', limit: 100, offset: 20 };
      const mine = await h.ops.visitors('p1', query);
      const theirs = await api(twin).visitors('p1', query);
      assert.equal(mine.text, theirs.text);
      assert.notEqual((await api(other).visitors('p1', query)).text, mine.text);
      assert.notEqual((await h.ops.visitors('p2', query)).text, mine.text, 'projects differ');
    } finally {
      await Promise.all([twin.close(), other.close()]);
    }
  });

  test('analytics.paths sets the default size; visitorPaths overrides it per project', async () => {
    const small = await startSimulator({ analytics: { paths: 7 } });
    try {
      small.configureProject('bigger', { visitorPaths: 9 });
      assert.equal(asPage(await api(small).visitors('p', { ...DAY, limit: 250 })).visitors.length, 7);
      assert.equal(asPage(await api(small).visitors('bigger', { ...DAY, limit: 250 })).visitors.length, 9);
    } finally {
      await small.close();
    }
  });
});

describe('query validation: 400 naming the parameter', () => {
  const cases: [Record<string, string>, string][] = [
    [{ limit: '0' }, 'limit'],
    [{ limit: '251' }, 'limit'],
    [{ limit: '1.5' }, 'limit'],
    [{ limit: 'ten' }, 'limit'],
    [{ limit: '' }, 'limit'],
    [{ offset: '-1' }, 'offset'],
    [{ offset: '2.5' }, 'offset'],
    [{ dateFrom: '2026-13-01' }, 'dateFrom'],
    [{ dateFrom: '2026-02-30', dateTo: '2026-03-02' }, 'dateFrom'],
    [{ dateFrom: 'yesterday' }, 'dateFrom'],
    [{ ...DAY, dateTo: '2026-11-01T25:00:00Z' }, 'dateTo'],
    [{ ...DAY, dateTo: '2026-11-02T00:00:00+0100' }, 'dateTo'],
    [{ ...DAY, dateTo: '2026-11-02T00:00Z' }, 'dateTo'],
    [{ dateFrom: '2024-02-30T00:00:00Z', dateTo: '2024-03-02' }, 'dateFrom'],
    [{ dateFrom: '2026-11-02', dateTo: '2026-11-01' }, 'dateTo'],
    [{ dateFrom: '2026-11-02', dateTo: '2026-11-02' }, 'dateTo'],
    [{ dateFrom: '2026-12-01' }, 'dateFrom'],
  ];
  for (const [query, field] of cases) {
    test(`${new URLSearchParams(query).toString()} -> ${field}`, async () => {
      const answer = await h.ops.visitors('p1', query);
      assert.equal(answer.status, 400);
      assert.equal(asError(answer).code, 'invalid_request');
      assert.equal(asError(answer).field, field);
      assert.match(asError(answer).message, new RegExp(field));
      assert.equal(h.sim.requests()[0]?.processed, false);
    });
  }

  test('limit 250 and unknown parameters are accepted', async () => {
    const answer = await h.ops.visitors('p1', { ...DAY, limit: 250, unknown: 'x' });
    assert.equal(answer.status, 200);
    assert.equal(asPage(answer).visitors.length, 120);
  });
});
