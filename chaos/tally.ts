import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { runCampaign } from './campaign';
import { CAMPAIGNS } from './options';

/**
 * `npm run chaos:tally -- --runs 30 --busy 15 --out chaos-tally.jsonl`: runs one campaign (quick by default)
 * again and again, the last `--busy` runs beside a process that keeps one core busy, and appends one JSON line
 * per run (violations, leaks, wall time) to `--out`, then a summary line. Exits 1 if any run had a violation.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '30' },
      busy: { type: 'string' },
      out: { type: 'string', default: 'chaos-tally.jsonl' },
      campaign: { type: 'string', default: 'quick' },
    },
  });
  const runs = Number(values.runs);
  const busy = values.busy === undefined ? Math.floor(runs / 2) : Number(values.busy);
  const name = values.campaign as keyof typeof CAMPAIGNS;
  const options = CAMPAIGNS[name];
  if (!options || !(runs > 0) || !(busy >= 0 && busy <= runs)) {
    throw new Error('usage: --runs N (> 0) --busy M (0..N) --campaign quick|full|exhausted --out FILE');
  }
  const summary = {
    campaign: name,
    runs,
    busy,
    failedRuns: 0,
    violations: 0,
    leaks: 0,
    seconds: [] as number[],
  };
  for (let run = 1; run <= runs; run += 1) {
    const besideBusyCore = run > runs - busy;
    const spinner = besideBusyCore ? busyCore() : undefined;
    const started = Date.now();
    let line: Record<string, unknown>;
    try {
      const report = await runCampaign(options);
      line = {
        run,
        besideBusyCore,
        seconds: (Date.now() - started) / 1000,
        wallSeconds: report.wallSeconds,
        violations: report.verdict.violations,
        leaks: report.secrets.leaks,
        jobs: report.verdict.jobs,
        followUps: report.verdict.followUps,
      };
      summary.violations += report.verdict.violations.length;
      summary.leaks += report.secrets.leaks.length;
      if (report.verdict.violations.length > 0 || report.secrets.leaks.length > 0) summary.failedRuns += 1;
    } catch (error) {
      line = { run, besideBusyCore, seconds: (Date.now() - started) / 1000, error: String(error) };
      summary.failedRuns += 1;
    } finally {
      spinner?.kill('SIGKILL');
    }
    summary.seconds.push(Number(line.seconds));
    fs.appendFileSync(values.out, `${JSON.stringify(line)}\n`);
    console.log(JSON.stringify(line));
  }
  fs.appendFileSync(values.out, `${JSON.stringify({ summary })}\n`);
  console.log(JSON.stringify({ summary }));
  return summary.failedRuns > 0 ? 1 : 0;
}

/** A process that keeps one core busy for as long as it lives. */
function busyCore(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
