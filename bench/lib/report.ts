import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporalCliVersion } from '../../test/helpers/temporal';

export const BENCHMARKS_DOC = path.resolve(__dirname, '../../docs/benchmarks.md');

export function markdownTable(header: string[], rows: (string | number)[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

export function machine(): string {
  const cpus = os.cpus();
  return (
    `${cpus.length} x ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
    `node ${process.version}, ${temporalCliVersion()}, ${new Date().toISOString().slice(0, 10)}`
  );
}

/** Replaces (or appends) the `## <title>` section of docs/benchmarks.md. */
export function recordSection(title: string, body: string): void {
  const heading = `## ${title}`;
  const doc = fs.existsSync(BENCHMARKS_DOC) ? fs.readFileSync(BENCHMARKS_DOC, 'utf8') : '# Benchmarks\n';
  const start = doc.indexOf(heading);
  const section = `${heading}\n\n${body.trim()}\n`;
  if (start < 0) {
    fs.writeFileSync(BENCHMARKS_DOC, `${doc.trimEnd()}\n\n${section}`);
    return;
  }
  const next = doc.indexOf('\n## ', start + heading.length);
  fs.writeFileSync(
    BENCHMARKS_DOC,
    `${doc.slice(0, start)}${section}${next < 0 ? '' : `\n${doc.slice(next + 1)}`}`,
  );
}
