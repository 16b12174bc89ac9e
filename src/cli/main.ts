import { ScheduleAlreadyRunning, ScheduleNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import { exportRun, exportRunSpec } from './visitors-export-commands';
import { setup, SETUP_DEPLOY_STEPS, setupSpec } from './setup-command';
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
  scheduleSimple,
  scheduleUpdate,
  scheduleUpdateSpec,
} from './schedule-commands';
import { helpText, type FlagSpec } from './flags';
import {
  jobCancel,
  jobCancelSpec,
  jobList,
  jobListSpec,
  jobMessage,
  jobMessageSpec,
  jobStart,
  jobStartSpec,
  jobStatus,
  jobStatusSpec,
} from './agent-job-commands';
import type { CommandContext } from './command-context';
import { ExitCode, UsageError } from './usage-error';
import {
  connectClient,
  grpcStatusOf,
  isUnreachableStatus,
  taskQueueFromEnv,
  TemporalUnreachableError,
} from '../client/connect';
import { ENCRYPTED_ENCODING } from '../codec/aes-gcm-codec';
import { PAYLOAD_CODEC_KEYS_VAR } from '../codec/keys';
import { InputValidationError } from '../contract/validation';
import { startTracing } from '../tracing/setup';

interface Command {
  summary: string;
  spec: FlagSpec;
  /** Printed after the options by `--help`. */
  details?: string;
  run: (argv: string[], ctx: CommandContext) => Promise<number>;
}

const projectOnly: FlagSpec = { project: { type: 'string', description: 'project id', required: true } };

const COMMANDS: Record<string, Command> = {
  setup: {
    summary: 'check the namespace, register its search attributes; route new runs to a version',
    spec: setupSpec,
    details: SETUP_DEPLOY_STEPS,
    run: setup,
  },
  'job start': { summary: 'start an agent job from a prompt', spec: jobStartSpec, run: jobStart },
  'job message': {
    summary: 'send a follow-up to a job (running or closed)',
    spec: jobMessageSpec,
    run: jobMessage,
  },
  'job status': { summary: "show a job's live state or result", spec: jobStatusSpec, run: jobStatus },
  'job list': { summary: 'list jobs by project and status', spec: jobListSpec, run: jobList },
  'job cancel': { summary: "cancel a job's workflow (polling stops)", spec: jobCancelSpec, run: jobCancel },
  'export run': { summary: 'export unique visitors for a date range', spec: exportRunSpec, run: exportRun },
  'export status': {
    summary: "show an export's progress or result",
    spec: exportStatusSpec,
    run: exportStatus,
  },
  'export list': { summary: 'list exports by project and state', spec: exportListSpec, run: exportList },
  'schedule create': {
    summary: "create a project's nightly export schedule",
    spec: scheduleCreateSpec,
    run: scheduleCreate,
  },
  'schedule update': {
    summary: 'change time, zone or export options',
    spec: scheduleUpdateSpec,
    run: scheduleUpdate,
  },
  'schedule describe': { summary: 'show a schedule', spec: projectOnly, run: scheduleDescribe },
  'schedule pause': { summary: 'pause a schedule', spec: projectOnly, run: scheduleSimple('pause') },
  'schedule unpause': { summary: 'resume a schedule', spec: projectOnly, run: scheduleSimple('unpause') },
  'schedule trigger': {
    summary: 'run a schedule now (exports every day due up to yesterday)',
    spec: projectOnly,
    run: scheduleSimple('trigger'),
  },
  'schedule backfill': {
    summary: "export past days (--from-day..--to-day, both included) with a schedule's settings",
    spec: scheduleBackfillSpec,
    run: scheduleBackfill,
  },
  'schedule delete': { summary: 'delete a schedule', spec: projectOnly, run: scheduleSimple('delete') },
};

const PROGRAM = 'docs-agent';
const EXIT_CODES = 'Exit codes: 0 ok, 1 failed, 2 bad arguments, 3 not found, 4 Temporal unreachable.';

function commandRows(prefix = ''): string {
  return Object.entries(COMMANDS)
    .filter(([name]) => name.startsWith(prefix))
    .map(([name, c]) => `  ${name.padEnd(18)} ${c.summary}`)
    .join('\n');
}

function overview(): string {
  return `Usage: ${PROGRAM} <command> [options]\n\nCommands:\n${commandRows()}\n\nRun "${PROGRAM} <command> --help" for a command's options. ${EXIT_CODES}\n`;
}

/** The commands of a group (`job`, `export`, `schedule`), for `docs-agent job` and `docs-agent job --help`. */
function groupOverview(group: string): string {
  return `Usage: ${PROGRAM} ${group} <command> [options]\n\nCommands:\n${commandRows(`${group} `)}\n\nRun "${PROGRAM} ${group} <command> --help" for a command's options. ${EXIT_CODES}\n`;
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

export async function runCli(argv: string[]): Promise<number> {
  const found = commandOf(argv);
  if (!found) {
    const [first = '', second] = argv;
    if (argv.length === 0 || first === '--help' || first === 'help') {
      process.stdout.write(overview());
      return argv.length === 0 ? ExitCode.usage : ExitCode.ok;
    }
    if (GROUPS.has(first) && (second === undefined || second === '--help' || second === 'help')) {
      (second === undefined ? process.stderr : process.stdout).write(groupOverview(first));
      return second === undefined ? ExitCode.usage : ExitCode.ok;
    }
    const name = argv.slice(0, 2).join(' ');
    process.stderr.write(
      `${PROGRAM}: unknown command "${name}"\n\n${GROUPS.has(first) ? groupOverview(first) : overview()}`,
    );
    return ExitCode.usage;
  }
  const { name, command, rest } = found;
  if (rest.includes('--help')) {
    process.stdout.write(helpText(`${PROGRAM} ${name} [options]`, command.spec));
    if (command.details) process.stdout.write(`\n${command.details}`);
    return ExitCode.ok;
  }
  // A job or an export started here is one trace: this command's span is its root (when OTEL_* asks for traces).
  const tracing = TRACE_ROOTS.has(name) ? await startTracing('docs-agent-cli') : undefined;
  const ctx: CommandContext = {
    client: () => connectClient(tracing ? { interceptors: tracing.clientInterceptors } : {}),
    taskQueue: taskQueueFromEnv(),
  };
  try {
    const run = () => command.run(rest, ctx);
    return await (tracing ? tracing.inRootSpan(`${PROGRAM} ${name}`, run) : run());
  } catch (error) {
    return reportError(name, error);
  } finally {
    await tracing?.shutdown();
  }
}

const TRACE_ROOTS = new Set(['job start', 'export run']);

function reportError(name: string, error: unknown): number {
  const { code, text } = describeFailure(`${PROGRAM} ${name}`, error);
  process.stderr.write(text);
  return code;
}

/** The exit code and the message of a command that threw: by the error's type and gRPC status, never its text. */
export function describeFailure(command: string, error: unknown): { code: number; text: string } {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError || error instanceof InputValidationError) {
    return {
      code: ExitCode.usage,
      text: `${command}: ${message}\nNothing was started. See "${command} --help".\n`,
    };
  }
  if (error instanceof WorkflowNotFoundError || error instanceof ScheduleNotFoundError) {
    return { code: ExitCode.notFound, text: `${command}: not found: ${message}\n` };
  }
  if (error instanceof ScheduleAlreadyRunning) {
    return { code: ExitCode.failed, text: `${command}: the schedule already exists\n` };
  }
  if (message.includes(ENCRYPTED_ENCODING)) {
    return {
      code: ExitCode.failed,
      text: `${command}: ${message}\nThe workflow's payloads are encrypted: set ${PAYLOAD_CODEC_KEYS_VAR} to read them.\n`,
    };
  }
  if (error instanceof TemporalUnreachableError) {
    return { code: ExitCode.unavailable, text: `${command}: ${message}\n` };
  }
  if (isUnreachableStatus(grpcStatusOf(error))) {
    return { code: ExitCode.unavailable, text: `${command}: Temporal is unreachable: ${message}\n` };
  }
  return { code: ExitCode.failed, text: `${command}: ${message}\n` };
}
