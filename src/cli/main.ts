import fs from 'node:fs';
import path from 'node:path';
import { exportRun, exportRunSpec } from './visitors-export-commands';
import { setup, SETUP_DEPLOY_STEPS, SETUP_ENV, setupSpec } from './setup-command';
import {
  exportList,
  exportListSpec,
  exportStatus,
  exportStatusSpec,
} from './visitors-export-status-commands';
import {
  scheduleBackfill,
  scheduleBackfillSpec,
  scheduleCreate,
  scheduleCreateSpec,
  scheduleDescribe,
  scheduleProject,
  scheduleSimple,
  scheduleUpdate,
  scheduleUpdateSpec,
} from './schedule-commands';
import { helpText, inFlagTerms, parseFlags, stringFlag, type FlagSpec, type Flags } from './flags';
import {
  jobCancel,
  jobCancelSpec,
  jobList,
  jobListSpec,
  jobMessage,
  jobMessageSpec,
  jobReset,
  jobResetSpec,
  jobStart,
  jobStartSpec,
  jobStatus,
  jobStatusSpec,
} from './agent-job-commands';
import type { CommandContext } from './command-context';
import { reportFailure, type CliStreams } from './output';
import { ExitCode, UsageError } from './usage-error';
import { connectClient, taskQueueFromEnv, temporalConnectConfig } from '../client/connect';
import { dataConverterFromEnv } from '../codec/aes-gcm-codec';
import { startTracing } from '../tracing/setup';

interface Command {
  summary: string;
  spec: FlagSpec;
  run: (argv: string[], ctx: CommandContext) => Promise<number>;
  /** Variables it reads besides the connection's and the payload keys'. */
  env?: readonly string[];
  /** A paragraph of help before the options (the date convention, say). */
  notes?: string;
}

const TASK_QUEUE_ENV = 'TEMPORAL_TASK_QUEUE  task queue of the workflows it starts (default docs-agent)';
const OTEL_ENV = 'OTEL_*  traces: this command is the root span of the job or export (off when unset)';
const CONNECTION_ENV = [
  'TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY  the connection (default localhost:7233, default)',
  'TEMPORAL_TLS (true|false), TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_*  TLS, mTLS',
  'TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE  a profile of the Temporal config file (as the temporal CLI)',
  'PAYLOAD_CODEC_KEYS or PAYLOAD_CODEC_KEYS_FILE  payload encryption keys, the same as the worker',
];
/** The one convention of every date range on the command line, the service's: the end is excluded. */
export const DATE_RANGE_NOTE =
  "Dates: --from is the first day, included; --to is the day after the last, excluded (the service's " +
  'dateTo): --from 2026-11-01 --to 2026-11-02 is November 1st alone.';

const COMMANDS: Record<string, Command> = {
  setup: {
    summary: 'check the namespace, register its search attributes; route new runs to a version',
    spec: setupSpec,
    notes: SETUP_DEPLOY_STEPS,
    env: SETUP_ENV,
    run: setup,
  },
  'job start': {
    summary: 'start an agent job from a prompt',
    spec: jobStartSpec,
    run: jobStart,
    env: [TASK_QUEUE_ENV, OTEL_ENV],
  },
  'job message': {
    summary: 'send a follow-up to a job (running or closed)',
    spec: jobMessageSpec,
    run: jobMessage,
    env: [TASK_QUEUE_ENV],
  },
  'job status': { summary: "show a job's live state or result", spec: jobStatusSpec, run: jobStatus },
  'job list': { summary: 'list jobs by project and status', spec: jobListSpec, run: jobList },
  'job cancel': { summary: "cancel a job's workflow (polling stops)", spec: jobCancelSpec, run: jobCancel },
  'job reset': {
    summary: "reset a job's run, only to a point that sends nothing twice",
    spec: jobResetSpec,
    run: jobReset,
  },
  'export run': {
    summary: 'export unique visitors for a date range',
    spec: exportRunSpec,
    run: exportRun,
    env: [TASK_QUEUE_ENV, OTEL_ENV],
    notes: DATE_RANGE_NOTE,
  },
  'export status': {
    summary: "show an export's progress or result",
    spec: exportStatusSpec,
    run: exportStatus,
    notes: DATE_RANGE_NOTE,
  },
  'export list': { summary: 'list exports by project and state', spec: exportListSpec, run: exportList },
  'schedule create': {
    summary: "create a project's nightly export schedule",
    spec: scheduleCreateSpec,
    run: scheduleCreate,
    env: [TASK_QUEUE_ENV],
  },
  'schedule update': {
    summary: 'change time, zone or export options',
    spec: scheduleUpdateSpec,
    run: scheduleUpdate,
  },
  'schedule describe': { summary: 'show a schedule', spec: scheduleProject, run: scheduleDescribe },
  'schedule pause': { summary: 'pause a schedule', spec: scheduleProject, run: scheduleSimple('pause') },
  'schedule unpause': {
    summary: 'resume a schedule',
    spec: scheduleProject,
    run: scheduleSimple('unpause'),
  },
  'schedule trigger': {
    summary: 'run a schedule now (exports every day due up to yesterday)',
    spec: scheduleProject,
    run: scheduleSimple('trigger'),
  },
  'schedule backfill': {
    summary: "export past days (--from..--to, --to excluded) with a schedule's settings",
    spec: scheduleBackfillSpec,
    run: scheduleBackfill,
    notes: DATE_RANGE_NOTE,
  },
  'schedule delete': { summary: 'delete a schedule', spec: scheduleProject, run: scheduleSimple('delete') },
};

const PROGRAM = 'docs-agent';
const EXIT_CODES = 'Exit codes: 0 ok, 1 failed, 2 bad arguments, 3 not found, 4 Temporal unreachable.';
const HELP = new Set(['--help', '-h', 'help']);

function commandRows(prefix = ''): string {
  return Object.entries(COMMANDS)
    .filter(([name]) => name.startsWith(prefix))
    .map(([name, c]) => `  ${name.padEnd(18)} ${c.summary}`)
    .join('\n');
}

/** The commands of a group (`job`, `export`, `schedule`), or all of them. */
function overview(group?: string): string {
  const words = group === undefined ? PROGRAM : `${PROGRAM} ${group}`;
  return (
    `Usage: ${words} <command> [options]\n\nCommands:\n${commandRows(group === undefined ? '' : `${group} `)}\n\n` +
    `Run "${words} <command> --help" for a command's options and the variables it reads. ${EXIT_CODES}\n`
  );
}

const GROUPS = new Set(
  Object.keys(COMMANDS).flatMap((name) => (name.includes(' ') ? [name.split(' ')[0]] : [])),
);

/** The command named by the first one or two words, and the arguments after its name. */
function commandOf(argv: string[]): { name: string; command: Command; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const command = COMMANDS[name];
    if (command && argv.length >= words) return { name, command, rest: argv.slice(words) };
  }
  return undefined;
}

/** The version of the package this CLI ships in (src/cli and dist/cli alike sit two levels below it). */
export function cliVersion(): string {
  const file = path.resolve(__dirname, '../../package.json');
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

/** Runs one command line; `io` receives the CLI's own lines (a command's results go to the process's stdout). */
export async function runCli(argv: string[], io: CliStreams = process): Promise<number> {
  const found = commandOf(argv);
  if (!found) {
    const [first = '', second] = argv;
    if (argv.includes('--version')) {
      io.stdout.write(`${PROGRAM} ${cliVersion()}\n`);
      return ExitCode.ok;
    }
    if (argv.length === 0 || HELP.has(first)) {
      (argv.length === 0 ? io.stderr : io.stdout).write(overview());
      return argv.length === 0 ? ExitCode.usage : ExitCode.ok;
    }
    if (GROUPS.has(first) && (second === undefined || HELP.has(second))) {
      (second === undefined ? io.stderr : io.stdout).write(overview(first));
      return second === undefined ? ExitCode.usage : ExitCode.ok;
    }
    const name = argv.slice(0, 2).join(' ');
    if (argv.includes('--json')) {
      return reportFailure(PROGRAM, new UsageError(`unknown command "${name}"`), true, io);
    }
    io.stderr.write(
      `${PROGRAM}: unknown command "${name}"\n\n${overview(GROUPS.has(first) ? first : undefined)}`,
    );
    return ExitCode.usage;
  }
  const { name, command, rest } = found;
  const full = `${PROGRAM} ${name}`;
  // Every flag, then the environment the connection needs, is checked before anything connects: bad input
  // exits 2 at once, naming the flag or the variable and its rule.
  let flags: Flags;
  try {
    flags = parseFlags(rest, command.spec);
    if (flags.help || flags.version) {
      io.stdout.write(
        flags.help
          ? helpText(
              `${full} [options]`,
              command.spec,
              [...CONNECTION_ENV, ...(command.env ?? [])],
              command.notes,
            )
          : `${PROGRAM} ${cliVersion()}\n`,
      );
      return ExitCode.ok;
    }
    temporalConnectConfig(overridesOf(flags));
    dataConverterFromEnv();
  } catch (error) {
    return reportFailure(full, error, rest.includes('--json'), io);
  }
  const json = flags.json === true;
  // A job or an export started here is one trace: this command's span is its root (when OTEL_* asks for traces).
  const tracing = TRACE_ROOTS.has(name) ? await startTracing('docs-agent-cli') : undefined;
  const ctx: CommandContext = {
    client: () =>
      connectClient({
        overrides: overridesOf(flags),
        ...(tracing ? { interceptors: tracing.clientInterceptors } : {}),
      }),
    taskQueue: taskQueueFromEnv(),
  };
  try {
    const run = () => command.run(rest, ctx);
    return await (tracing ? tracing.inRootSpan(full, run) : run());
  } catch (error) {
    return reportFailure(full, inFlagTerms(error, command.spec), json, io);
  } finally {
    await tracing?.shutdown();
  }
}

const TRACE_ROOTS = new Set(['job start', 'export run']);

function overridesOf(flags: Flags): { address?: string; namespace?: string; profile?: string } {
  const overrides: { address?: string; namespace?: string; profile?: string } = {};
  for (const key of ['address', 'namespace', 'profile'] as const) {
    const value = stringFlag(flags[key]);
    if (value !== undefined) overrides[key] = value;
  }
  return overrides;
}
