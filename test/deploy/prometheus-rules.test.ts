import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { ALERT_RULE_TESTS, ALERT_RULES, DEPLOY_DIR, alertRules } from '../helpers/deploy';
import { promtool, promtoolSkipped } from '../helpers/promtool';

const ROOT = path.resolve(__dirname, '../..');
const RUNBOOK = 'docs/runbook.md';
/** Where the runbook is read from an alert: the repository's default branch on GitHub. */
const RUNBOOK_URL = `https://github.com/docs-agent/docs-agent-worker/blob/main/${RUNBOOK}`;

/** GitHub's anchor of a Markdown heading. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

test('alert rules: the five the operators need, each with a severity, a summary and its runbook section', async () => {
  const rules = await alertRules();
  assert.deepEqual(rules.map((rule) => rule.alert).sort(), [
    'DocsAgentJobsFailing',
    'DocsAgentNightlyExportBehind',
    'DocsAgentRateLimited',
    'DocsAgentTaskQueueBacklog',
    'DocsAgentTaskQueueNotPolled',
  ]);
  const runbook = await fs.readFile(path.join(ROOT, RUNBOOK), 'utf8');
  const sections = new Map(
    runbook
      .split(/^## /m)
      .slice(1)
      .map((section) => [anchorOf(section.split('\n')[0] ?? ''), section]),
  );
  for (const rule of rules) {
    const severity = rule.labels?.severity ?? '';
    assert.ok(['warning', 'critical'].includes(severity), `${rule.alert}: severity ${severity}`);
    assert.ok(rule.annotations?.summary, `${rule.alert}: summary`);
    const url = rule.annotations?.runbook_url ?? '';
    assert.ok(url.startsWith(`${RUNBOOK_URL}#`), `${rule.alert}: runbook_url ${url}`);
    const section = sections.get(url.slice(RUNBOOK_URL.length + 1));
    assert.ok(section, `${rule.alert}: no section of ${RUNBOOK} has the anchor of ${url}`);
    assert.ok(section.startsWith(`${rule.alert}\n`), `${rule.alert}: its section is headed by its name`);
    // The runbook says why the alert has its severity.
    assert.match(section, new RegExp(`Severity: \`${severity}\``), `${rule.alert}: severity in ${RUNBOOK}`);
  }
});

test('the rules file names only files that exist', async () => {
  const text = await fs.readFile(path.join(DEPLOY_DIR, ALERT_RULES), 'utf8');
  const cited = [...text.matchAll(/\b(?:test|src|docs|deploy)\/[\w./-]+\.(?:ts|md|yml|json)\b/g)].map(
    (m) => m[0],
  );
  cited.push(
    ...[...text.matchAll(/\b[\w-]+\.test\.yml\b/g)].map((m) => path.join('deploy/prometheus', m[0])),
  );
  assert.ok(cited.length > 0);
  for (const file of cited) {
    await assert.doesNotReject(fs.access(path.join(ROOT, file)), `${ALERT_RULES} names ${file}`);
  }
});

test('every alert has a promtool case where it fires', async () => {
  const cases = parse(await fs.readFile(path.join(DEPLOY_DIR, ALERT_RULE_TESTS), 'utf8')) as {
    rule_files: string[];
    tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
  };
  assert.deepEqual(cases.rule_files, [path.basename(ALERT_RULES)]);
  const firing = new Set(
    cases.tests.flatMap((t) =>
      (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname),
    ),
  );
  for (const rule of await alertRules()) assert.ok(firing.has(rule.alert), `${rule.alert} fires in a case`);
});

test('promtool: the rules are valid and every case passes', { skip: promtoolSkipped() }, async () => {
  const check = await promtool(['check', 'rules', path.join(DEPLOY_DIR, ALERT_RULES)]);
  assert.equal(check.code, 0, check.output);
  const cases = await promtool(['test', 'rules', path.join(DEPLOY_DIR, ALERT_RULE_TESTS)]);
  assert.equal(cases.code, 0, cases.output);
});
