import os from 'node:os';
import { temporalCliVersion } from '../dev/temporal';
import type { CampaignReport } from './campaign';
import type { OperatorTally } from './operator-oracle';

const table = (rows: [string, string | number][]) =>
  ['| | |', '|---|---|', ...rows.map(([name, value]) => `| ${name} | ${value} |`)].join('\n');

const tally = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name}: ${n}`)
    .join(', ') || '-';

/** A campaign's section of docs/reliability.md ("## Latest run" for the full campaign). */
export function latestRunSection(report: CampaignReport, command: string, heading: string): string {
  const { options, service, verdict, secrets } = report;
  const cpus = os.cpus();
  return [
    heading,
    '',
    `\`${command}\` on ${new Date().toISOString().slice(0, 10)}: ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, ` +
      `${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, ${temporalCliVersion()}.`,
    '',
    table([
      ...(report.operators
        ? operatorRows(report.operators, options.operators?.projects)
        : workloadRows(report)),
      ['worker SIGKILLs', `${report.workerKills} at t+${report.workerKillsAt.join(', t+')} s`],
      ['Temporal server restarts', `${report.serverRestarts} at t+${report.serverRestartsAt.join(', t+')} s`],
      ['worker exits nobody asked for', report.unexpectedWorkerExits],
      ['requests to the service', tally(service.requests)],
      ['answers by status', tally(service.responsesByStatus)],
      ['wall time until every workflow closed', `${report.wallSeconds.toFixed(1)} s`],
      ...(report.operators ? operatorOracleRows(report.operators) : verdictRows(report)),
      [
        'histories scanned for the API key',
        `${secrets.histories} (${(secrets.historyBytes / 1024).toFixed(0)} KiB)`,
      ],
      [
        'files, log bytes, CLI outputs, error messages scanned',
        `${secrets.files}, ${secrets.logBytes}, ${secrets.cliOutputs}, ${secrets.errorMessages}`,
      ],
      ['API key found', secrets.leaks.length === 0 ? 'nowhere' : secrets.leaks.join('; ')],
      ['violations', violationsText(verdict.violations)],
    ]),
    '',
  ].join('\n');
}

/** Every violation, or with more than 5 the first 5 (the run prints them all). */
function violationsText(violations: string[]): string {
  if (violations.length === 0) return 'none';
  const shown = violations.slice(0, 5).join('; ').replaceAll('|', '\\|');
  return violations.length > 5 ? `${violations.length}, the first 5: ${shown}` : shown;
}

function workloadRows({ options, verdict, ...report }: CampaignReport): [string, string | number][] {
  return [
    ['agent jobs', `${report.jobs} over ${options.jobProjects} projects`],
    ['follow-ups sent', `${report.followUpsSent} (signals and updates alternately)`],
    ['exports', `${report.exports} (${verdict.exportRows} rows in all)`],
  ];
}

function verdictRows(report: CampaignReport): [string, string | number][] {
  const { verdict } = report;
  return [
    ['jobs by ending', tally(verdict.jobs)],
    [
      'jobs created at the service',
      `${verdict.createsAtService} (${report.jobs} jobs, ${verdict.createsOutcomeUnknown} creates reported outcome unknown)`,
    ],
    ['follow-ups by status', tally(verdict.followUps)],
    ...budgetRows(report),
    ['exports whole (rows and sha256 checked)', `${verdict.exportsWhole} of ${report.exports}`],
  ];
}

function operatorRows(operators: OperatorTally, projects: number | undefined): [string, string | number][] {
  return [
    ['seed, plan digest', `${operators.seed}, ${operators.digest}`],
    ['agent jobs', `${operators.jobs} over ${projects ?? '?'} projects`],
    ['operator actions', tally(operators.actions)],
  ];
}

function operatorOracleRows(operators: OperatorTally): [string, string | number][] {
  const { counts } = operators;
  return [
    ['answers the operator got', tally(operators.answers)],
    ['resets', tally(operators.resets)],
    ['jobs by ending (last run)', tally(operators.endings)],
    ['follow-ups (by messageId)', tally(operators.followUps)],
    [
      'updates accepted, answered without a FollowUp type (not counted)',
      operators.untypedUpdateAnswers.join('; ') || 'none',
    ],
    ['jobs created twice', counts.jobsCreatedTwice],
    ['messageIds sent twice', counts.messageIdsSentTwice],
    ['accepted follow-ups never sent (no excuse)', counts.acceptedNeverSent],
    ['jobs neither ended nor visibly waiting', counts.neitherEndedNorWaiting],
    ['resets made to points not offered', counts.resetsMadeToPointsNotOffered],
    ['messageIds refused every time, yet sent', counts.refusedYetSent],
  ];
}

function budgetRows({ options, budgets }: CampaignReport): [string, string | number][] {
  if (!options.budgets || !budgets) return [];
  const { analytics, agent } = options.budgets;
  const rate = (b: { requests: number; windowMs: number }) => `${b.requests} per ${b.windowMs / 1000} s`;
  return [
    ['budgets', `analytics ${rate(analytics)} for the key, agent ${rate(agent)} per project`],
    [
      'foreign spender (same key, ignores Retry-After)',
      `wants ${Math.round((options.foreignShare ?? 0) * 100)}% of every window; took analytics ${budgets.foreignSpent.analytics}, agent ${budgets.foreignSpent.agent}; refused ${budgets.foreignRefused.analytics + budgets.foreignRefused.agent} times`,
    ],
    [
      '429s the worker met',
      `${budgets.refusals} in all (analytics ${budgets.refusalsByBudget.analytics}, agent ${budgets.refusalsByBudget.agent}); at most ${budgets.maxRefusalsIn60s} in any 60 s (allowed ${options.max429PerMinute ?? '-'}); by minute ${budgets.refusalsByMinute.join(', ') || '0'}`,
    ],
  ];
}
