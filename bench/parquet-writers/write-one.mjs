// One measurement of bench/parquet-writers.ts, in its own process so that its RSS is its own: writes `rows`
// visitor rows, produced page by page (250 rows) as the merge produces them, with one writer to one file, in row
// groups of `rowGroup` rows. Prints { seconds, peakGrowthMiB (the library loaded included), bytes } as JSON. Run with --expose-gc.
// Plain JavaScript: the candidates are installed only here (npm ci --prefix bench/parquet-writers).
import { Buffer } from 'node:buffer';
import console from 'node:console';
import { once } from 'node:events';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { Writable } from 'node:stream';
import { ReadableStream } from 'node:stream/web';
import { clearInterval, setImmediate, setInterval } from 'node:timers';
import zlib from 'node:zlib';

const PAGE_ROWS = 250;
const { candidate, codec, rows, rowGroup, file } = JSON.parse(process.argv[2]);

const rssMiB = () => process.memoryUsage.rss() / 2 ** 20;
const rowAt = (n) => ({ path: `/docs/section-${n % 97}/page-${n}`, human: n % 13, ai: n % 7, total: n % 17 });

/** The merge's page loop: a page of rows at a time, the event loop turning between pages. */
async function* pages() {
  for (let first = 0; first < rows; first += PAGE_ROWS) {
    const page = [];
    for (let n = first; n < Math.min(rows, first + PAGE_ROWS); n += 1) page.push(rowAt(n));
    yield page;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A file written with backpressure, like the local destination's final object. */
function fileSink(path) {
  const stream = fs.createWriteStream(path);
  return {
    async write(chunk) {
      if (!stream.write(chunk)) await once(stream, 'drain');
    },
    async close() {
      stream.end();
      await once(stream, 'finish');
    },
  };
}

/** Column arrays of one row group, filled row by row. */
function columns(size) {
  return {
    size: 0,
    path: new Array(size),
    human: new BigInt64Array(size),
    ai: new BigInt64Array(size),
    total: new BigInt64Array(size),
    add(row) {
      const at = this.size++;
      this.path[at] = row.path;
      this.human[at] = BigInt(row.human);
      this.ai[at] = BigInt(row.ai);
      this.total[at] = BigInt(row.total);
    },
  };
}

const writers = {
  async csv(sink) {
    let text = 'path,human,ai,total\n';
    for await (const page of pages()) {
      for (const r of page) text += `${r.path},${r.human},${r.ai},${r.total}\n`;
      if (text.length >= 256 * 1024) {
        await sink.write(Buffer.from(text));
        text = '';
      }
    }
    await sink.write(Buffer.from(text));
  },

  async hyparquet(sink) {
    const { ByteWriter, ParquetWriter } = await import('hyparquet-writer');
    const writer = new ByteWriter();
    writer.flush = async () => {
      const chunk = new Uint8Array(writer.buffer.slice(0, writer.index));
      writer.index = 0;
      await sink.write(chunk);
    };
    writer.finish = writer.flush;
    const int64 = (name) => ({ name, type: 'INT64', repetition_type: 'REQUIRED' });
    const schema = [
      { name: 'root', num_children: 4 },
      { name: 'path', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
      int64('human'),
      int64('ai'),
      int64('total'),
    ];
    const compressors = codec === 'ZSTD' ? { ZSTD: (bytes) => zlib.zstdCompressSync(bytes) } : {};
    const parquet = new ParquetWriter({ writer, schema, codec, compressors });
    let group = columns(rowGroup);
    const writeGroup = async () => {
      const slice = (a) => a.slice(0, group.size);
      const names = ['path', 'human', 'ai', 'total'];
      await parquet.write({
        columnData: names.map((name) => ({ name, data: slice(group[name]) })),
        rowGroupSize: group.size,
      });
      group = columns(rowGroup);
    };
    for await (const page of pages()) {
      for (const row of page) {
        group.add(row);
        if (group.size === rowGroup) await writeGroup();
      }
    }
    if (group.size > 0) await writeGroup();
    await parquet.finish();
  },

  async parquetjs(sink) {
    const parquet = (await import('@dsnp/parquetjs')).default;
    const compression = codec;
    const schema = new parquet.ParquetSchema({
      path: { type: 'UTF8', compression },
      human: { type: 'INT64', compression },
      ai: { type: 'INT64', compression },
      total: { type: 'INT64', compression },
    });
    const out = new Writable({
      write: (chunk, _encoding, done) => sink.write(chunk).then(() => done(), done),
    });
    const writer = await parquet.ParquetWriter.openStream(schema, out, { rowGroupSize: rowGroup });
    for await (const page of pages()) for (const row of page) await writer.appendRow(row);
    await writer.close();
  },

  async 'parquet-wasm'(sink) {
    const wasm = await import('parquet-wasm');
    const arrow = await import('apache-arrow');
    const properties = new wasm.WriterPropertiesBuilder()
      .setCompression(wasm.Compression[codec])
      .setMaxRowGroupSize(rowGroup)
      .build();
    const source = pages();
    let group = columns(rowGroup);
    let done = false;
    const batches = new ReadableStream({
      async pull(controller) {
        while (!done && group.size < rowGroup) {
          const next = await source.next();
          if (next.done) done = true;
          else for (const row of next.value) group.add(row);
        }
        if (group.size === 0) return controller.close();
        const slice = (a) => a.slice(0, group.size);
        const table = arrow.tableFromArrays({
          path: arrow.vectorFromArray(slice(group.path), new arrow.Utf8()),
          human: slice(group.human),
          ai: slice(group.ai),
          total: slice(group.total),
        });
        group = columns(rowGroup);
        for (const batch of wasm.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')).recordBatches()) {
          controller.enqueue(batch);
        }
        if (done) controller.close();
      },
    });
    const bytes = await wasm.transformParquetStream(batches, properties);
    for await (const chunk of bytes) await sink.write(chunk);
  },

  async duckdb(_sink, path) {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const database = `${path}.duckdb`;
    const instance = await DuckDBInstance.create(database, { threads: '1', memory_limit: '64MB' });
    const connection = await instance.connect();
    await connection.run('CREATE TABLE visitors (path VARCHAR, human BIGINT, ai BIGINT, total BIGINT)');
    const appender = await connection.createAppender('visitors');
    let pending = 0;
    for await (const page of pages()) {
      for (const row of page) {
        appender.appendVarchar(row.path);
        appender.appendBigInt(BigInt(row.human));
        appender.appendBigInt(BigInt(row.ai));
        appender.appendBigInt(BigInt(row.total));
        appender.endRow();
      }
      pending += page.length;
      if (pending >= rowGroup) {
        appender.flushSync();
        pending = 0;
      }
    }
    appender.closeSync();
    await connection.run(
      `COPY visitors TO '${path}' (FORMAT parquet, COMPRESSION ${codec.toLowerCase()}, ROW_GROUP_SIZE ${rowGroup})`,
    );
    connection.closeSync();
    instance.closeSync();
    for (const leftover of [database, `${database}.wal`]) fs.rmSync(leftover, { force: true });
  },
};

async function main() {
  globalThis.gc?.();
  const before = rssMiB();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB())), 20);
  const started = performance.now();
  const sink = candidate === 'duckdb' ? undefined : fileSink(file);
  await writers[candidate](sink, file);
  await sink?.close();
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, rssMiB());
  const result = { seconds, peakGrowthMiB: peak - before, bytes: fs.statSync(file).size };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
