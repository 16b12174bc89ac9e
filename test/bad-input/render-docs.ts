import fs from 'node:fs/promises';
import path from 'node:path';
import * as prettier from 'prettier';
import * as badInput from './cases';

/**
 * Writes the tables of docs/bad-input.md from the rows of test/bad-input/cases.ts: `npm run docs:bad-input`.
 * Only the part between the markers is generated; the prose around it is written by hand.
 * test/bad-input/docs.test.ts fails when the committed file differs from what this would write.
 */
export const DOC_PATH = path.resolve(__dirname, '../../docs/bad-input.md');
export const BEGIN_MARKER =
  '<!-- BEGIN generated from test/bad-input/cases.ts by `npm run docs:bad-input` -->';
export const END_MARKER = '<!-- END generated -->';

type Cases = typeof badInput;
type RowOf<K extends keyof Cases> = Cases[K] extends readonly (infer R)[] ? R : never;

interface Section<R> {
  title: string;
  /** What matrix.test.ts checks for every row of the section. */
  checks: string;
  expected(row: R): string;
}

type Sections = { [K in keyof Cases as Cases[K] extends readonly unknown[] ? K : never]: Section<RowOf<K>> };

/** A pattern as the text it expects: anchors dropped, escapes undone, wildcards shown as an ellipsis. */
export function readable(pattern: RegExp): string {
  return pattern.source
    .replace(/^\^|\$$/g, '')
    .replace(/\.\*/g, '…')
    .replace(/\\(.)/g, '$1');
}

function code(text: string): string {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

const sections: Sections = {
  cliCases: {
    title: 'Starter CLI (a child process)',
    checks:
      'the exit code and the error text on stderr; exit 2 also says "Nothing was started"; nothing on stdout; ' +
      'no request, no workflow, no schedule; the workflow or schedule id the command would use does not exist.',
    expected: (c) => `exit ${c.exit}, ${code(readable(c.stderr))}`,
  },
  clientCases: {
    title: 'Client module (`src/client`)',
    checks:
      'an `InputValidationError` whose issue names the field with the rule below; no request, no workflow, ' +
      'no schedule.',
    expected: (c) => `\`InputValidationError\`, ${code(`${c.field}: ${readable(c.rule)}`)}`,
  },
  docsApiCases: {
    title: 'Service client (`DocsApiClient`)',
    checks: 'a non-retryable `InvalidArgumentError` naming the field, thrown before any request is sent.',
    expected: (c) => `\`InvalidArgumentError\`, ${code(`invalid argument ${c.field}: ${readable(c.rule)}`)}`,
  },
  rawStartCases: {
    title: 'Raw start (bad input given straight to Temporal, bypassing the client)',
    checks:
      'the run fails with a non-retryable `InvalidInput` naming the field; no activity is scheduled, no request ' +
      'is sent.',
    expected: (c) => `\`InvalidInput\` (non-retryable), ${code(readable(c.message))}`,
  },
  updateCases: {
    title: 'Update `sendFollowUp`',
    checks:
      "the update's validator refuses it: nothing enters history, no message is sent, the job completes and " +
      'was created once.',
    expected: (c) => `${code(c.type)}, ${code(readable(c.message))}`,
  },
  signalCases: {
    title: 'Signal `followUp`',
    checks:
      'a bad signal is recorded as `rejected` with the rule and never sent; a good follow-up is delivered once ' +
      'and the job completes.',
    expected: (c) =>
      c.error
        ? `recorded \`rejected\` as ${code(c.messageId)}: ${code(readable(c.error))}`
        : `ignored (the first one wins), ${code(c.messageId)} delivered once`,
  },
  getJobAnswerCases: {
    title: "The service's answer to a get-job poll (once, then normal answers)",
    checks:
      'the job completes, created once; the failure is logged once with the HTTP status, request id and a ' +
      'short body excerpt, never the key. A refusal (403, 3xx) is not retried: the get-job is sent once and the ' +
      'run fails with a non-retryable `AgentJobPollRejected`.',
    expected: (c) => {
      if (c.outcome === 'rejected')
        return `\`AgentJobPollRejected\` (non-retryable): ${code(readable(c.failure ?? /./))}`;
      return c.failure
        ? code(readable(c.failure))
        : 'none: the answer is tolerated (nothing logged as a failure)';
    },
  },
  createAnswerCases: {
    title: "The service's answer to a create",
    checks:
      'the create is sent once and never re-sent. An answer that still names the job (its `id`) is kept: the job ' +
      'is polled and completes. One without a usable id fails the run with a non-retryable ' +
      '`AgentJobCreateOutcomeUnknown`; a refusal (403, 3xx) with `AgentJobCreateRejected`, and no job is polled.',
    expected: (c) => {
      if (c.outcome === 'completes') return 'none: the job is kept, polled and completes';
      const type = c.outcome === 'rejected' ? 'AgentJobCreateRejected' : 'AgentJobCreateOutcomeUnknown';
      return c.failure
        ? `\`${type}\` (non-retryable): ${code(readable(c.failure))}`
        : `\`${type}\` (non-retryable)`;
    },
  },
  messageAnswerCases: {
    title: "The service's answer to a follow-up message",
    checks:
      'the message is sent once and never re-sent; the follow-up is recorded with the status and error below ' +
      '(in `getState` and the result), and the job completes, created once.',
    expected: (c) => `recorded ${code(c.status)}: ${code(readable(c.error))}`,
  },
  visitorsAnswerCases: {
    title: "The service's answer to a visitors page (once, then normal answers)",
    checks: 'the page is retried and the export is whole: every row, no warning.',
    expected: (c) =>
      c.failure ? `retried after ${code(readable(c.failure))}` : 'none: the page counts as it is',
  },
};

function isSectionName(name: string): name is keyof Sections {
  return Object.hasOwn(sections, name);
}

/** The generated part: one table per exported array of cases, rows numbered across the tables. */
export function renderTables(cases: Record<string, unknown>): string {
  const lines: string[] = [];
  let number = 0;
  for (const [name, rows] of Object.entries(cases)) {
    if (!Array.isArray(rows)) continue;
    if (!isSectionName(name))
      throw new Error(
        `test/bad-input/cases.ts exports ${name}: say in test/bad-input/render-docs.ts how to document it`,
      );
    const section = sections[name] as Section<unknown>;
    lines.push(`### ${section.title}`, '', `Each row checks ${section.checks}`, '');
    lines.push('| # | Case | Expected |', '| --- | --- | --- |');
    for (const row of rows as { name: string }[]) {
      number += 1;
      lines.push(`| ${number} | ${cell(row.name)} | ${cell(section.expected(row))} |`);
    }
    lines.push('');
  }
  return [`${number} cases.`, '', ...lines].join('\n');
}

/** The whole document: `current` with its generated part replaced, formatted as `npm run format` would. */
export async function renderDoc(current: string, cases: Record<string, unknown> = badInput): Promise<string> {
  const begin = current.indexOf(BEGIN_MARKER);
  const end = current.indexOf(END_MARKER);
  if (begin < 0 || end < begin)
    throw new Error(`${DOC_PATH} lacks the markers ${BEGIN_MARKER} ... ${END_MARKER}`);
  const text = [current.slice(0, begin + BEGIN_MARKER.length), renderTables(cases), current.slice(end)].join(
    '\n\n',
  );
  const options = await prettier.resolveConfig(DOC_PATH);
  return prettier.format(text, { ...options, filepath: DOC_PATH });
}

async function main(): Promise<void> {
  const current = await fs.readFile(DOC_PATH, 'utf8');
  const next = await renderDoc(current);
  if (next === current) {
    console.log(`${path.relative(process.cwd(), DOC_PATH)} is up to date`);
    return;
  }
  await fs.writeFile(DOC_PATH, next);
  console.log(`wrote ${path.relative(process.cwd(), DOC_PATH)}`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
