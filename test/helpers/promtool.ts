import { spawn } from 'node:child_process';
import fs from 'node:fs';

/** Prometheus's promtool, built from its Go module by scripts/install-promtool.sh (.ci/run sets PROMTOOL_PATH). */
const PROMTOOL = process.env.PROMTOOL_PATH;

/** A test's `skip` option: skipped without promtool, except under CI=true, where the test then fails. */
export function promtoolSkipped(): string | false {
  if ((PROMTOOL !== undefined && fs.existsSync(PROMTOOL)) || process.env.CI === 'true') return false;
  return 'no promtool: build it with scripts/install-promtool.sh and set PROMTOOL_PATH to the path it prints (CI=true makes this a failure)';
}

/** Runs promtool with `args`, `stdin` as its input; its exit code and everything it wrote. */
export async function promtool(args: string[], stdin = ''): Promise<{ code: number | null; output: string }> {
  if (PROMTOOL === undefined || !fs.existsSync(PROMTOOL)) {
    throw new Error(
      `promtool is needed (PROMTOOL_PATH=${PROMTOOL ?? ''}): scripts/install-promtool.sh builds it`,
    );
  }
  const child = spawn(PROMTOOL, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stdin.end(stdin);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  return { code, output };
}
