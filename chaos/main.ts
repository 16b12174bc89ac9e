import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runCampaign } from './campaign';
import { CAMPAIGNS } from './options';
import { latestRunSection } from './report';

const RELIABILITY_DOC = path.resolve(__dirname, '../docs/reliability.md');
/** Where each recorded campaign's figures go in docs/reliability.md (the quick ones are not recorded). */
const HEADINGS = {
  full: '## Latest run',
  exhausted: '## Exhausted budgets: latest run',
  operators: '## Operator campaign: latest run',
} as const;

/**
 * `npm run chaos [-- --quick | --exhausted | --operators | --operators-quick] [--seed N]`: runs the campaign,
 * prints the figures and records them in docs/reliability.md. `--seed` fixes the operator campaign's actions.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean' },
      exhausted: { type: 'boolean' },
      operators: { type: 'boolean' },
      'operators-quick': { type: 'boolean' },
      seed: { type: 'string' },
    },
  });
  const name =
    (['quick', 'exhausted', 'operators', 'operators-quick'] as const).find((n) => values[n]) ?? 'full';
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  const base = CAMPAIGNS[name];
  if (seed !== undefined && (!Number.isSafeInteger(seed) || !base.operators)) {
    throw new Error('--seed: a whole number, for --operators or --operators-quick');
  }
  const options =
    base.operators && seed !== undefined ? { ...base, operators: { ...base.operators, seed } } : base;
  const report = await runCampaign(options, (line) => console.log(line));
  const flags = [
    ...(name === 'full' ? [] : [`--${name}`]),
    ...(seed === undefined ? [] : [`--seed ${seed}`]),
  ];
  const command = `npm run chaos${flags.length === 0 ? '' : ` -- ${flags.join(' ')}`}`;
  const heading = name === 'quick' || name === 'operators-quick' ? '## Quick run' : HEADINGS[name];
  const section = latestRunSection(report, command, heading);
  console.log(`\n${section}`);
  for (const violation of report.verdict.violations) console.log(`violation: ${violation}`);
  if (heading !== '## Quick run') {
    const doc = fs.readFileSync(RELIABILITY_DOC, 'utf8');
    fs.writeFileSync(RELIABILITY_DOC, withSection(doc, heading, section));
    console.log(`recorded in ${path.relative(process.cwd(), RELIABILITY_DOC)}`);
  }
  const failed = report.verdict.violations.length > 0 || report.secrets.leaks.length > 0;
  return failed ? 1 : 0;
}

/** The document with the section under `heading` replaced (up to the next "## " heading), or appended. */
function withSection(doc: string, heading: string, section: string): string {
  const at = doc.indexOf(`${heading}\n`);
  if (at < 0) return `${doc.trimEnd()}\n\n${section}`;
  const next = doc.indexOf('\n## ', at + heading.length);
  return `${doc.slice(0, at)}${section}${next < 0 ? '' : `\n${doc.slice(next + 1)}`}`;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
