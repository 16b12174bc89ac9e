import fs from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyBytes } from '../dev/history-json';
import { retrying } from './retrying';

export interface SecretScan {
  histories: number;
  historyBytes: number;
  files: number;
  logBytes: number;
  cliOutputs: number;
  errorMessages: number;
  /** Where the key (or its secret part) was found: empty when nothing leaked. */
  leaks: string[];
}

/**
 * Looks for the API key everywhere the campaign left something: every workflow history of the namespace
 * (every run: inputs, activity arguments and results, failures), worker logs, files written, CLI output and the
 * error messages callers received.
 */
export async function scanForKey(
  apiKey: string,
  sources: {
    client: Client;
    exportDir: string;
    workerLogs: string;
    cliOutputs: string[];
    errorMessages: string[];
  },
  deadline: number,
): Promise<SecretScan> {
  const needles = [apiKey, apiKey.slice(apiKey.indexOf('_') + 1)].map((text) => Buffer.from(text, 'utf8'));
  const leaks: string[] = [];
  const check = (where: string, bytes: Buffer) => {
    if (needles.some((needle) => bytes.includes(needle))) leaks.push(where);
  };
  const scan: SecretScan = {
    histories: 0,
    historyBytes: 0,
    files: 0,
    logBytes: Buffer.byteLength(sources.workerLogs),
    cliOutputs: sources.cliOutputs.length,
    errorMessages: sources.errorMessages.length,
    leaks,
  };
  const executions: { workflowId: string; runId: string }[] = [];
  await retrying(async () => {
    executions.length = 0;
    for await (const execution of sources.client.workflow.list()) {
      executions.push({ workflowId: execution.workflowId, runId: execution.runId });
    }
  }, deadline);
  for (const { workflowId, runId } of executions) {
    const history = await retrying(
      () => sources.client.workflow.getHandle(workflowId, runId).fetchHistory(),
      deadline,
    );
    const bytes = historyBytes(history);
    scan.histories += 1;
    scan.historyBytes += bytes.length;
    check(`history of ${workflowId} (${runId})`, bytes);
  }
  for (const file of await filesUnder(sources.exportDir)) {
    scan.files += 1;
    check(`file ${file}`, await fs.readFile(file));
  }
  check('worker logs', Buffer.from(sources.workerLogs, 'utf8'));
  sources.cliOutputs.forEach((output, i) => check(`CLI output ${i}`, Buffer.from(output, 'utf8')));
  sources.errorMessages.forEach((message, i) => check(`error message ${i}`, Buffer.from(message, 'utf8')));
  return scan;
}

async function filesUnder(directory: string): Promise<string[]> {
  const entries = await fs.readdir(directory, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}
