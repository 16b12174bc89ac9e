import fs from 'node:fs';
import path from 'node:path';

/** A part of `src/` an issue sets a size for: path prefixes under `src/`, and its most lines (and files). */
interface CodeSet {
  name: string;
  prefixes: string[];
  maxLines: number;
  maxFiles?: number;
}

export const CODE_SETS: CodeSet[] = [
  { name: 'src/ as a whole (issue 46)', prefixes: [''], maxLines: 10_000, maxFiles: 90 },
  {
    name: 'agent jobs (issue 44)',
    prefixes: [
      'workflows/agent-job/',
      'activities/agent-job.ts',
      'activities/poll-agent-job.ts',
      'client/agent-job',
      'cli/agent-job-commands.ts',
      'contract/agent-job',
      'contract/follow-up-checks.ts',
      'contract/poll-schedule.ts',
      'contract/messages.ts',
    ],
    maxLines: 2_000,
  },
  {
    name: 'exports and the nightly (issue 45)',
    prefixes: [
      'workflows/visitors-export/',
      'workflows/visitors-nightly/',
      'activities/visitors-',
      'activities/nightly',
      'exports/',
      'contract/visitors-export',
      'contract/nightly',
      'contract/zone-days.ts',
      'cli/export-commands.ts',
      'cli/schedule-commands.ts',
      'client/visitors-export',
      'client/schedule.ts',
    ],
    maxLines: 4_300,
  },
];

export interface CodeSizeRow {
  name: string;
  files: number;
  lines: number;
  maxLines: number;
  maxFiles?: number;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
}

/** Lines as `wc -l` counts them (newlines) of the TypeScript files of each set, under `srcDir`. */
export function codeSize(srcDir = path.join(__dirname, '..', 'src')): CodeSizeRow[] {
  const lines = new Map(
    sourceFiles(srcDir).map((file) => {
      const text = fs.readFileSync(path.join(srcDir, file), 'utf8');
      return [file.split(path.sep).join('/'), text.split('\n').length - 1] as const;
    }),
  );
  return CODE_SETS.map(({ name, prefixes, maxLines, maxFiles }) => {
    const files = [...lines.keys()].filter((file) => prefixes.some((prefix) => file.startsWith(prefix)));
    const total = files.reduce((sum, file) => sum + (lines.get(file) ?? 0), 0);
    return { name, files: files.length, lines: total, maxLines, ...(maxFiles ? { maxFiles } : {}) };
  });
}

export function codeSizeTable(rows: CodeSizeRow[]): string {
  const verdict = (row: CodeSizeRow) =>
    row.lines <= row.maxLines && (row.maxFiles === undefined || row.files <= row.maxFiles) ? 'met' : 'missed';
  return [
    '| code | files | lines | target | verdict |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| ${row.name} | ${row.files} | ${row.lines} | ≤ ${row.maxLines} lines` +
        `${row.maxFiles === undefined ? '' : `, ≤ ${row.maxFiles} files`} | ${verdict(row)} |`,
    ),
  ].join('\n');
}
