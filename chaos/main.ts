import fs from 'node:fs';
import path from 'node:path';
import { runCampaign } from './campaign';
import { CAMPAIGNS } from './options';
import { latestRunSection } from './report';

const RELIABILITY_DOC = path.resolve(__dirname, '../docs/reliability.md');
/** Where each recorded campaign's figures go in docs/reliability.md (the quick one is not recorded). */
const HEADINGS = { full: '## Latest run', exhausted: '## Exhausted budgets: latest run' } as const;

/**
 * `npm run chaos [-- --quick | --exhausted]`: runs the campaign, prints the figures and records them in
 * docs/reliability.md.
 */
async function main(): Promise<number> {
  const name = process.argv.includes('--quick')
    ? 'quick'
    : process.argv.includes('--exhausted')
      ? 'exhausted'
      : 'full';
  const report = await runCampaign(CAMPAIGNS[name], (line) => console.log(line));
  const command = `npm run chaos${name === 'full' ? '' : ` -- --${name}`}`;
  const heading = name === 'quick' ? '## Quick run' : HEADINGS[name];
  const section = latestRunSection(report, command, heading);
  console.log(`\n${section}`);
  if (name !== 'quick') {
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
