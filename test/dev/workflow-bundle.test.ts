import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { contentKey, workflowBundle, workflowBundlePath } from '../../dev/workflow-bundle';

test('the cache key follows every name and content under the inputs, and nothing else', async (t) => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'bundle-key-'));
  t.after(() => fs.rm(root, { recursive: true, force: true }));
  await fs.mkdir(path.join(root, 'src', 'workflows'), { recursive: true });
  await fs.writeFile(path.join(root, 'src', 'workflows', 'index.ts'), 'export {};\n');
  await fs.writeFile(path.join(root, 'package-lock.json'), '{}');
  await fs.writeFile(path.join(root, 'README.md'), 'not an input');
  const inputs = ['src', 'package-lock.json'];
  const first = await contentKey(root, inputs);

  assert.equal(await contentKey(root, inputs), first, 'the same inputs, the same key');
  await fs.writeFile(path.join(root, 'README.md'), 'edited');
  assert.equal(await contentKey(root, inputs), first, 'a file outside the inputs does not count');

  await fs.writeFile(path.join(root, 'src', 'workflows', 'index.ts'), 'export const x = 1;\n');
  const edited = await contentKey(root, inputs);
  assert.notEqual(edited, first, 'an edited source');
  await fs.writeFile(path.join(root, 'src', 'workflows', 'new.ts'), '');
  const added = await contentKey(root, inputs);
  assert.notEqual(added, edited, 'an added (even empty) source');
  await fs.rename(
    path.join(root, 'src', 'workflows', 'new.ts'),
    path.join(root, 'src', 'workflows', 'other.ts'),
  );
  const renamed = await contentKey(root, inputs);
  assert.notEqual(renamed, added, 'a renamed source');
  await fs.writeFile(path.join(root, 'package-lock.json'), '{"lockfileVersion":3}');
  assert.notEqual(await contentKey(root, inputs), renamed, 'another lockfile (SDK or bundler versions)');
});

test('the bundle of the current sources is a whole file in the cache, named after its inputs', async () => {
  const file = await workflowBundlePath();
  assert.match(
    path.relative(process.cwd(), file),
    /^node_modules\/\.cache\/workflow-bundles\/[0-9a-f]{32}\.js$/,
  );
  const before = await fs.stat(file);
  const { code } = await workflowBundle();
  assert.match(code, /agentJob/, 'the workflows of src/workflows');
  assert.match(code, /visitorsExport/);
  assert.equal(Buffer.byteLength(code), before.size, 'the whole file');
});
