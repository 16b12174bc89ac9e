import { ScheduleAlreadyRunning, ScheduleNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import { exportRun, exportRunSpec } from './visitors-export-commands';
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
import { connectClient, taskQueueFromEnv } from '../client/connect';
import { ENCRYPTED_ENCODING } from '../codec/aes-gcm-codec';
import { PAYLOAD_CODEC_KEYS_VAR } from '../codec/keys';
import { InputValidationError } from '../contract/validation';

interface Command {
  summary: string;
  spec: FlagSpec;
  run: (argv: string[], ctx: CommandContext) => Promise<number>;
}

const projectOnly: FlagSpec = { project: { type: 'string', description: 'project id', required: true } };

const COMMANDS: Record<string, Command> = {
  'job start': { summary: 'start an agent job from a prompt', spec: jobStartSpec, run: jobStart },
  'job message': {
    summary: 'send a follow-up to a job (running or closed)',
    spec: jobMessageSpec,
    run: jobMessage,
  },
  'job status': { summary: "show a job's live state or result", spec: jobStatusSpec, run: jobStatus },
  'job list': { summary: 'list jobs by project and status', spec: jobListSpec, run: jobList },
  'export run': { summary: 'export unique visitors for a date range', spec: exportRunSpec, run: exportRun },
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
    summary: 'run a schedule now (exports yesterday)',
    spec: projectOnly,
    run: scheduleSimple('trigger'),
  },
  'schedule backfill': {
    summary: 'run a schedule for past days',
    spec: scheduleBackfillSpec,
    run: scheduleBackfill,
  },
  'schedule delete': { summary: 'delete a schedule', spec: projectOnly, run: scheduleSimple('delete') },
};

const PROGRAM = 'docs-agent';

function overview(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(18)} ${c.summary}`);
  return `Usage: ${PROGRAM} <command> [options]\n\nCommands:\n${rows.join('\n')}\n\nRun "${PROGRAM} <command> --help" for a command's options. Exit codes: 0 ok, 1 failed, 2 bad arguments, 3 not found, 4 Temporal unreachable.\n`;
}

export async function runCli(argv: string[]): Promise<number> {
  const name = argv.slice(0, 2).join(' ');
  const command = COMMANDS[name];
  if (!command) {
    if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
      process.stdout.write(overview());
      return argv.length === 0 ? ExitCode.usage : ExitCode.ok;
    }
    process.stderr.write(`${PROGRAM}: unknown command "${name}"\n\n${overview()}`);
    return ExitCode.usage;
  }
  const rest = argv.slice(2);
  if (rest.includes('--help')) {
    process.stdout.write(helpText(`${PROGRAM} ${name} [options]`, command.spec));
    return ExitCode.ok;
  }
  const ctx: CommandContext = { client: connectClient, taskQueue: taskQueueFromEnv() };
  try {
    return await command.run(rest, ctx);
  } catch (error) {
    return reportError(name, error);
  }
}

function reportError(name: string, error: unknown): number {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError || error instanceof InputValidationError) {
    process.stderr.write(
      `${PROGRAM} ${name}: ${message}\nNothing was started. See "${PROGRAM} ${name} --help".\n`,
    );
    return ExitCode.usage;
  }
  if (error instanceof WorkflowNotFoundError || error instanceof ScheduleNotFoundError) {
    process.stderr.write(`${PROGRAM} ${name}: not found: ${message}\n`);
    return ExitCode.notFound;
  }
  if (error instanceof ScheduleAlreadyRunning) {
    process.stderr.write(`${PROGRAM} ${name}: the schedule already exists\n`);
    return ExitCode.failed;
  }
  if (message.includes(ENCRYPTED_ENCODING)) {
    process.stderr.write(
      `${PROGRAM} ${name}: ${message}\nThe workflow's payloads are encrypted: set ${PAYLOAD_CODEC_KEYS_VAR} to read them.\n`,
    );
    return ExitCode.failed;
  }
  if (/connect|UNAVAILABLE|ECONNREFUSED|deadline/i.test(message)) {
    process.stderr.write(`${PROGRAM} ${name}: Temporal is unreachable: ${message}\n`);
    return ExitCode.unavailable;
  }
  process.stderr.write(`${PROGRAM} ${name}: ${message}\n`);
  return ExitCode.failed;
}
