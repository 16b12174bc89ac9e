import fs from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';

export const DEPLOY_DIR = path.resolve(__dirname, '../../deploy');
export const DASHBOARD = 'grafana/docs-agent-worker.json';
export const ALERT_RULES = 'prometheus/docs-agent-alerts.yml';
/** The `promtool test rules` cases of ALERT_RULES. */
export const ALERT_RULE_TESTS = 'prometheus/docs-agent-alerts.test.yml';

/** A rule of the rules file: an alerting rule (`alert`) or a recording rule (`record`). */
export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export type AlertRule = Rule & { alert: string };

export async function rules(): Promise<Rule[]> {
  const file = parse(await fs.readFile(path.join(DEPLOY_DIR, ALERT_RULES), 'utf8')) as {
    groups: { name: string; rules: Rule[] }[];
  };
  return file.groups.flatMap((group) => group.rules);
}

export async function alertRules(): Promise<AlertRule[]> {
  return (await rules()).filter((rule): rule is AlertRule => rule.alert !== undefined);
}

interface Panel {
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** Every PromQL expression of the dashboard (panels and variable queries) and of the rules, by file. */
export async function deployExpressions(): Promise<Record<string, string[]>> {
  const dashboard = JSON.parse(await fs.readFile(path.join(DEPLOY_DIR, DASHBOARD), 'utf8')) as {
    panels: Panel[];
    templating: { list: { query?: unknown }[] };
  };
  const panelExpressions = (panels: Panel[]): string[] =>
    panels.flatMap((panel) => [
      ...(panel.targets ?? []).flatMap((target) => (target.expr ? [target.expr] : [])),
      ...panelExpressions(panel.panels ?? []),
    ]);
  const variables = dashboard.templating.list.flatMap((v) => (typeof v.query === 'string' ? [v.query] : []));
  return {
    [DASHBOARD]: [...panelExpressions(dashboard.panels), ...variables],
    [ALERT_RULES]: (await rules()).map((rule) => rule.expr),
  };
}
