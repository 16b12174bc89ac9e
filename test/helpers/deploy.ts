import fs from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';

export const DEPLOY_DIR = path.resolve(__dirname, '../../deploy');
export const DASHBOARD = 'grafana/docs-agent-worker.json';
export const ALERT_RULES = 'prometheus/docs-agent-alerts.yml';

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export async function alertRules(): Promise<AlertRule[]> {
  const file = parse(await fs.readFile(path.join(DEPLOY_DIR, ALERT_RULES), 'utf8')) as {
    groups: { name: string; rules: AlertRule[] }[];
  };
  return file.groups.flatMap((group) => group.rules);
}

interface Panel {
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** Every PromQL expression of the dashboard (panels and variable queries) and of the alert rules, by file. */
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
    [ALERT_RULES]: (await alertRules()).map((rule) => rule.expr),
  };
}
