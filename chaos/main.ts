import fs from 'node:fs';
import path from 'node:path';
import { runCampaign } from './campaign';
import { FULL_CAMPAIGN, QUICK_CAMPAIGN } from './options';
import { latestRunSection } from './report';

const RELIABILITY_DOC = path.resolve(__dirname, '../docs/reliability.md');
const HEADING = '## Latest run';

/** `npm run chaos [-- --quick]`: runs the campaign, prints the figures and records them in docs/reliability.md. */
async function main(): Promise<number> {
  const quick = process.argv.includes('--quick');
  const report = await runCampaign(quick ? QUICK_CAMPAIGN : FULL_CAMPAIGN, (line) => console.log(line));
  const section = latestRunSection(report, `npm run chaos${quick ? ' -- --quick' : ''}`);
  console.log(`\n${section}`);
  if (!quick) {
    const doc = fs.readFileSync(RELIABILITY_DOC, 'utf8');
    const at = doc.indexOf(HEADING);
    fs.writeFileSync(RELIABILITY_DOC, `${at < 0 ? `${doc.trimEnd()}\n\n` : doc.slice(0, at)}${section}`);
    console.log(`recorded in ${path.relative(process.cwd(), RELIABILITY_DOC)}`);
  }
  const failed = report.verdict.violations.length > 0 || report.secrets.leaks.length > 0;
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
