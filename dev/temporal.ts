import { execFileSync } from 'node:child_process';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import { SEARCH_ATTRIBUTE_KEYS } from '../src/contract/names';
import { temporalCliPath } from './temporal-cli';

export { temporalCliPath };

export interface DevServerOptions {
  /** SQLite file, to restart the server on the same state; in memory when absent. */
  dbFilename?: string;
  port?: number;
  ui?: boolean;
  uiPort?: number;
  /** The codec server the Web UI calls to show decoded payloads. */
  uiCodecEndpoint?: string;
  /** Server dynamic config (`--dynamic-config-value key=<JSON value>`), e.g. system.enableActivityEagerExecution. */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** false: none of the contract's search attributes, as on an existing server before `docs-agent setup`. */
  searchAttributes?: boolean;
  /** Namespaces created beside `default` (e.g. `callers`, where Nexus callers run). */
  namespaces?: string[];
  /** The frontend's HTTP API (`--http-port`), where Nexus endpoints answer HTTP callers. */
  httpPort?: number;
}

/** A real Temporal dev server (the official CLI) with the contract's search attributes registered (unless told not to). */
export async function startTemporal(options: DevServerOptions = {}): Promise<TestWorkflowEnvironment> {
  installQuietRuntime();
  const cli = temporalCliPath();
  return TestWorkflowEnvironment.createLocal({
    server: {
      ...(cli ? { executable: { type: 'existing-path', path: cli } } : {}),
      searchAttributes: options.searchAttributes === false ? [] : [...SEARCH_ATTRIBUTE_KEYS],
      ...(options.dbFilename === undefined ? {} : { dbFilename: options.dbFilename }),
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.ui === undefined ? {} : { ui: options.ui }),
      ...(options.uiPort === undefined ? {} : { uiPort: options.uiPort }),
      extraArgs: [
        '--log-level',
        'error',
        ...(options.namespaces ?? []).flatMap((namespace) => ['--namespace', namespace]),
        ...(options.httpPort === undefined ? [] : ['--http-port', String(options.httpPort)]),
        ...(options.uiCodecEndpoint === undefined ? [] : ['--ui-codec-endpoint', options.uiCodecEndpoint]),
        ...Object.entries(options.dynamicConfig ?? {}).flatMap(([key, value]) => [
          '--dynamic-config-value',
          `${key}=${JSON.stringify(value)}`,
        ]),
      ],
    },
  });
}

/** Temporal CLI version line, for benchmark reports. */
export function temporalCliVersion(): string {
  const cli = temporalCliPath();
  return cli ? execFileSync(cli, ['--version'], { encoding: 'utf8' }).trim() : 'sdk-downloaded dev server';
}

let runtimeInstalled = false;

/** SDK logs at WARN in tests (TEST_LOG_LEVEL overrides), so the runner's output stays readable. */
export function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new DefaultLogger((process.env.TEST_LOG_LEVEL ?? 'WARN') as LogLevel) });
}
