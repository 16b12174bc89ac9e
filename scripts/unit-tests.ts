// `npm run test:unit`: the tests that need no server, in well under a minute. A test file needs one when anything it
// imports, directly or through other files of this repository, starts one: the dev stack and its Temporal dev
// server, the service simulator, the workflow bundler, a browser, Python tools or another process. Those run in
// `npm test`. The rule reads imports, so a new test file is sorted without a list to keep up to date.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

/** Modules that start a server, a browser or a process (paths from the root, or package names). */
const NEEDS_A_SERVER = [
  'dev/stack.ts',
  'dev/simulator/',
  'dev/workflow-bundle.ts',
  'test/helpers/stack.ts',
  'test/helpers/browser.ts',
  'test/helpers/python.ts',
  '@temporalio/testing',
  'node:child_process',
  'child_process',
  'playwright-core',
];

/** Imports that load a module at run time: `import ... from`, `export ... from`, `import '...'`, `import()`,
 * `require()`. Type-only imports (`import type`, `export type`) load nothing and are skipped. */
const IMPORT =
  /^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'|(?:import|require)\(\s*'([^']+)'/gm;

function resolveTs(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier);
  return [`${base}.ts`, path.join(base, 'index.ts'), base].find(
    (file) => file.endsWith('.ts') && fs.existsSync(file),
  );
}

/** The first module of NEEDS_A_SERVER that `file` reaches through its imports, or undefined. */
function serverReachedFrom(file: string, seen = new Set<string>()): string | undefined {
  if (seen.has(file)) return undefined;
  seen.add(file);
  const own = path.relative(ROOT, file);
  const direct = NEEDS_A_SERVER.find((marker) => own === marker || own.startsWith(marker));
  if (direct !== undefined) return direct;
  for (const match of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    if (specifier === undefined) continue;
    if (!specifier.startsWith('.')) {
      if (NEEDS_A_SERVER.includes(specifier)) return specifier;
      continue;
    }
    const target = resolveTs(file, specifier);
    const reached = target === undefined ? undefined : serverReachedFrom(target, seen);
    if (reached !== undefined) return reached;
  }
  return undefined;
}

const testFiles = fs
  .readdirSync(path.join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => path.join(ROOT, 'test', file))
  .sort();
const unit = testFiles.filter((file) => serverReachedFrom(file) === undefined);
if (process.argv.includes('--list')) {
  for (const file of testFiles) {
    const reached = serverReachedFrom(file);
    process.stdout.write(
      `${reached === undefined ? 'unit  ' : 'server'} ${path.relative(ROOT, file)}${reached ? ` (${reached})` : ''}\n`,
    );
  }
  process.exit(0);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-timeout=60000', ...unit.map((file) => path.relative(ROOT, file))],
  { cwd: ROOT, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
