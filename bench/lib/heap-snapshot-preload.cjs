// Preloaded into a benchmark's worker process (NODE_OPTIONS=--require), where it also runs in each worker
// thread: the SDK evaluates workflows in a thread of their own, whose heap neither /proc nor
// --heapsnapshot-signal reaches. Every second each thread writes its V8 heap statistics to
// `<HEAP_SNAPSHOT_DIR>/thread-<id>.json`. For each new file `gc-<name>` there, it first runs a full GC (and
// names it in the statistics, `afterGc`); once a file `take` exists, it writes `thread-<id>.heapsnapshot`, once.
'use strict';
/* global require */
/* eslint-disable @typescript-eslint/no-require-imports -- a --require preload is CommonJS */
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');
const { threadId } = require('node:worker_threads');
const process = require('node:process');
const { setInterval } = require('node:timers');

const dir = process.env.HEAP_SNAPSHOT_DIR;
if (dir) {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const out = path.join(dir, `thread-${threadId}`);
  const collected = new Set();
  let afterGc = null;
  let taken = false;
  const timer = setInterval(() => {
    const files = fs.readdirSync(dir);
    for (const file of files.filter((name) => name.startsWith('gc-') && !collected.has(name))) {
      collected.add(file);
      gc();
      afterGc = file;
    }
    fs.writeFileSync(`${out}.json.partial`, JSON.stringify({ ...v8.getHeapStatistics(), afterGc }));
    fs.renameSync(`${out}.json.partial`, `${out}.json`);
    if (taken || !files.includes('take')) return;
    taken = true;
    v8.writeHeapSnapshot(`${out}.heapsnapshot.partial`);
    fs.renameSync(`${out}.heapsnapshot.partial`, `${out}.heapsnapshot`);
  }, 1000);
  timer.unref();
}
