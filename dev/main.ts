import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { ensureNexusEndpoint } from '../src/client/setup';
import { DEFAULT_NEXUS_ENDPOINT, DEFAULT_TASK_QUEUE, SEARCH_ATTRIBUTE_KEYS } from '../src/contract/names';
import { MAX_PORT, portFromText } from '../src/contract/validation';
import { startSimulator, type Simulator } from './simulator';
import { main as runWorker } from '../src/worker';
import { temporalCliPath } from './temporal-cli';

/**
 * `npm run dev`: a persistent Temporal dev server with its UI, the service simulator (unless DOCS_API_KEY
 * points the worker at a real service), and the worker. Ctrl-C stops everything.
 */
const STATE_DIR = path.resolve('.temporal-dev');
const TEMPORAL_PORT = devPort('DEV_TEMPORAL_PORT', 7233);
const UI_PORT = devPort('DEV_UI_PORT', 8233);
const SIMULATOR_PORT = devPort('DEV_SIMULATOR_PORT', 4010);
/** The namespace where Nexus callers run (README: "Calling it from other services"). */
const CALLERS_NAMESPACE = 'callers';

/** A port from the environment (docs/development.md: "Prerequisites"), or the default; a bad value stops before anything starts. */
function devPort(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const port = portFromText.safeParse(text);
  if (!port.success || port.data === 0) {
    throw new Error(`${name}: must be a TCP port, 1..${MAX_PORT} (got "${text.slice(0, 20)}")`);
  }
  return port.data;
}

async function startDevServer(): Promise<ChildProcess> {
  const cli = temporalCliPath();
  if (!cli) {
    throw new Error(
      'The Temporal CLI is needed: install it (README, "Quick start"; docs/development.md) or set TEMPORAL_CLI_PATH',
    );
  }
  fs.mkdirSync(STATE_DIR, { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--db-filename',
    path.join(STATE_DIR, 'temporal.db'),
    '--port',
    String(TEMPORAL_PORT),
    '--ui-port',
    String(UI_PORT),
    '--log-level',
    'error',
    ...SEARCH_ATTRIBUTE_KEYS.flatMap((key) => ['--search-attribute', `${key.name}=Keyword`]),
    '--namespace',
    CALLERS_NAMESPACE,
  ];
  const server = spawn(cli, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  const address = `127.0.0.1:${TEMPORAL_PORT}`;
  for (let attempt = 0; attempt < 60; attempt++) {
    if (server.exitCode !== null)
      throw new Error(`temporal server start-dev exited with code ${server.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.close();
      return server;
    } catch {
      await sleep(500);
    }
  }
  throw new Error(`the Temporal dev server did not answer on ${address}`);
}

async function main(): Promise<void> {
  const stops: (() => Promise<unknown>)[] = [];
  const useOwnServer = process.env.TEMPORAL_ADDRESS === undefined;
  if (useOwnServer) {
    const server = await startDevServer();
    process.env.TEMPORAL_ADDRESS = `127.0.0.1:${TEMPORAL_PORT}`;
    stops.push(async () => {
      if (server.exitCode === null) server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    });
  }

  let simulator: Simulator | undefined;
  if (!process.env.DOCS_API_KEY) {
    simulator = await startSimulator({ port: SIMULATOR_PORT, jobs: { durationMs: 20_000 } });
    process.env.DOCS_API_BASE_URL = simulator.url;
    process.env.DOCS_API_KEY = simulator.apiKey;
    stops.push(() => simulator?.close() ?? Promise.resolve());
  }

  const queue = process.env.TEMPORAL_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
  if (useOwnServer) {
    // The Nexus endpoint `docs-agent`, routing callers of any namespace (e.g. `callers`) to this worker.
    const connection = await Connection.connect({ address: `127.0.0.1:${TEMPORAL_PORT}` });
    const targetNamespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
    await ensureNexusEndpoint(new Client({ connection }), { targetNamespace, taskQueue: queue });
    await connection.close();
  }
  console.log(
    [
      '',
      `Temporal:   ${process.env.TEMPORAL_ADDRESS}${useOwnServer ? ` (dev server, state in ${path.relative(process.cwd(), STATE_DIR)}/)` : ''}`,
      useOwnServer ? `Temporal UI: http://localhost:${UI_PORT}` : '',
      `Service:    ${process.env.DOCS_API_BASE_URL}${simulator ? ' (simulator: jobs complete after 20 s)' : ''}`,
      `Task queue: ${queue}`,
      useOwnServer
        ? `Nexus:      endpoint ${DEFAULT_NEXUS_ENDPOINT} -> default/${queue}; callers run in namespace ${CALLERS_NAMESPACE}`
        : '',
      '',
      'Try:',
      `  temporal workflow start --task-queue ${queue} --type agentJob --workflow-id agent-job/demo/first \\`,
      `    --input '{"projectId":"demo","prompt":"Fix the typos in the quickstart"}'`,
      '  npm run starter -- job start --project demo --prompt "Fix the typos in the quickstart" --wait',
      '',
    ]
      .filter((line, i, all) => line !== '' || all[i - 1] !== '')
      .join('\n'),
  );

  try {
    await runWorker();
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
