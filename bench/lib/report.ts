import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as prettier from 'prettier';
import { temporalCliVersion } from '../../dev/temporal';

export const BENCHMARKS_DOC = path.resolve(__dirname, '../../docs/benchmarks.md');

export function markdownTable(header: string[], rows: (string | number)[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

/** CPU model, cores and RAM (node:os), node and Temporal CLI versions, and the date: how a figure was made. */
export function machine(): string {
  const cpus = os.cpus();
  return [
    `- Machine: ${cpus[0]?.model.trim() ?? 'unknown cpu'}, ${cpus.length} cores, ` +
      `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM (${os.platform()} ${os.release()})`,
    `- Versions: node ${process.version}; ${temporalCliVersion()}`,
    `- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  ].join('\n');
}

/** Below this line a section's text is written by hand (analysis, figures from tests): a new run keeps it. */
export const KEPT_NOTES_MARKER = '<!-- notes: kept when the section is recorded again -->';

/**
 * Replaces (or appends) the `## <title>` section of docs/benchmarks.md, formatted by the project's Prettier
 * config so that a recorded run passes `npm run format:check` as it is. Notes below KEPT_NOTES_MARKER stay.
 */
/** The last part of docs/benchmarks.md: superseded runs, by date. */
export const HISTORY_HEADING = '# History: superseded runs';

export async function recordSection(title: string, body: string, file = BENCHMARKS_DOC): Promise<void> {
  const heading = `## ${title}`;
  const doc = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n';
  const start = doc.indexOf(`\n${heading}\n`);
  // A new section goes before the history of superseded runs, which closes the page.
  const historyAt = doc.indexOf(`\n${HISTORY_HEADING}\n`);
  let updated =
    historyAt < 0
      ? `${doc.trimEnd()}\n\n${heading}\n\n${body.trim()}\n`
      : `${doc.slice(0, historyAt).trimEnd()}\n\n${heading}\n\n${body.trim()}\n${doc.slice(historyAt)}`;
  if (start >= 0) {
    const ends = [
      doc.indexOf('\n## ', start + heading.length + 1),
      doc.indexOf(`\n${HISTORY_HEADING}\n`, start),
    ];
    const next = Math.min(...ends.map((at) => (at < 0 ? doc.length : at)));
    const old = doc.slice(start + 1, next);
    const notesAt = old.indexOf(KEPT_NOTES_MARKER);
    const notes = notesAt < 0 ? '' : `\n${old.slice(notesAt).trim()}\n`;
    const section = `${heading}\n\n${body.trim()}\n${notes}`;
    updated = `${doc.slice(0, start + 1)}${section}${doc.slice(next)}`;
  }
  const config = await prettier.resolveConfig(BENCHMARKS_DOC);
  fs.writeFileSync(file, await prettier.format(updated, { ...config, filepath: BENCHMARKS_DOC }));
}
