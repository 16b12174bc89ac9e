import { Command, CommanderError, Help, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import {
  connectClient,
  grpcStatusOf,
  isUnreachableStatus,
  taskQueueFromEnv,
  temporalConnectConfig,
  TemporalUnreachableError,
} from '../client/connect';
import { dataConverterFromEnv, ENCRYPTED_ENCODING } from '../codec/aes-gcm-codec';
import { CodecKeyError, PAYLOAD_CODEC_KEYS_VAR } from '../codec/keys';
import { packageVersion } from '../config';
import { ConfigError } from '../contract/errors';
import { InputValidationError } from '../contract/validation';
import { startTracing } from '../tracing/setup';
import { jobCommands } from './agent-job-commands';
import { ExitCode, option, text, UsageError, type Run } from './command';
import { exportCommands } from './export-commands';
import { scheduleCommands } from './schedule-commands';
import { setupCommand } from './setup-command';

const ENVIRONMENT = `
Environment (a flag wins over its variable):
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY  the connection (default localhost:7233, default)
  TEMPORAL_TLS (true|false), TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_*  TLS, mTLS
  TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE  a profile of the Temporal config file (as the temporal CLI)
  PAYLOAD_CODEC_KEYS or PAYLOAD_CODEC_KEYS_FILE  payload encryption keys, the same as the worker
  TEMPORAL_TASK_QUEUE  task queue of the workflows job start, job message and export run start, and of a new
    schedule's runs (default docs-agent)
  OTEL_*  traces: job start and export run are the root span of the job or export (off when unset)

Exit codes: 0 ok, 1 failed, 2 bad arguments, 3 not found, 4 Temporal unreachable.`;

/**
 * Runs one command line; `io` receives the CLI's own lines: help, version, failures (a command's results go to the
 * process's stdout).
 * Every flag, then the environment the connection needs, is checked before anything connects: bad input exits 2
 * at once, naming the flag or the variable and its rule.
 */
export async function runCli(
  argv: string[],
  io: Record<'stdout' | 'stderr', { write: (text: string) => unknown }> = process,
): Promise<number> {
  let code: number = ExitCode.ok;
  const program = new Command('docs-agent')
    .version(`docs-agent ${packageVersion()}`, '--version', "print docs-agent's version")
    .option('--json', 'print machine-readable JSON (errors too)')
    .addOption(option('--address <host:port>', 'Temporal address (overrides TEMPORAL_ADDRESS)', text))
    .addOption(option('--namespace <name>', 'Temporal namespace (overrides TEMPORAL_NAMESPACE)', text))
    .addOption(
      option(
        '--profile <name>',
        'profile of the Temporal config file, TEMPORAL_CONFIG_FILE (overrides TEMPORAL_PROFILE)',
        text,
      ),
    )
    .exitOverride()
    .configureOutput({
      writeOut: (line) => io.stdout.write(line),
      writeErr: (line) => io.stderr.write(line),
      outputError: () => undefined,
    })
    .configureHelp({
      showGlobalOptions: true,
      optionDescription: (o) => `${new Help().optionDescription(o)}${o.mandatory ? ' (required)' : ''}`,
    })
    .addHelpText('afterAll', ENVIRONMENT);
  const command = () => commandOf(program, argv);
  const run: Run = async (work, trace) => {
    const { json, ...overrides } = program.opts();
    temporalConnectConfig(overrides);
    dataConverterFromEnv();
    const tracing = trace ? await startTracing('docs-agent-cli') : undefined;
    const ctx = {
      client: () =>
        connectClient({ overrides, ...(tracing ? { interceptors: tracing.clientInterceptors } : {}) }),
      taskQueue: taskQueueFromEnv(),
      json: json === true,
    };
    try {
      code = await (tracing ? tracing.inRootSpan(command().name, () => work(ctx)) : work(ctx));
    } finally {
      await tracing?.shutdown();
    }
  };
  setupCommand(program, run);
  jobCommands(program, run);
  exportCommands(program, run);
  scheduleCommands(program, run);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    // Help and the version exit 0; a group's help, printed on stderr when its command is missing, exits 2.
    if (error instanceof CommanderError && error.exitCode === 0) return ExitCode.ok;
    if (error instanceof CommanderError && error.code === 'commander.help') return ExitCode.usage;
    const { name, flags } = command();
    const failure =
      error instanceof CommanderError ? new UsageError(error.message.replace(/^error: /, '')) : error;
    const { code, text, json } = describeFailure(name, inFlagTerms(failure, flags));
    io.stderr.write(argv.includes('--json') ? `${JSON.stringify(json)}\n` : text);
    return code;
  }
}

/** The command the words of argv name (`docs-agent job start`), and its flags. */
function commandOf(program: CommandUnknownOpts, argv: string[]): { name: string; flags: string[] } {
  let command = program;
  const words = [program.name()];
  for (const word of argv) {
    const sub = command.commands.find((c) => c.name() === word);
    if (!sub) break;
    command = sub;
    words.push(word);
  }
  return { name: words.join(' '), flags: command.options.flatMap((o) => (o.long ? [o.long] : [])) };
}

/** The flag that sets a field of the contract, when its name is not the field's in kebab case. */
const FLAG_OF_FIELD: Record<string, string> = {
  projectId: '--project',
  dateFrom: '--from',
  fromDay: '--from',
  dateTo: '--to',
  toDay: '--to',
  timeZone: '--tz',
};

/** An input error of the contract (`dateTo`, `polling.deadline`) said in the command's flags, where it has them. */
function inFlagTerms(error: unknown, flags: string[]): unknown {
  if (!(error instanceof InputValidationError)) return error;
  const flagOf = (field: string): string | undefined => {
    const name = field.split('.').at(-1) ?? field;
    const flag = FLAG_OF_FIELD[name] ?? `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    return flags.includes(flag) ? flag : undefined;
  };
  if (!error.issues.some((issue) => flagOf(issue.field))) return error;
  return new UsageError(
    error.issues.map((issue) => `${flagOf(issue.field) ?? issue.field}: ${issue.rule}`).join('; '),
  );
}

/** The exit code and the message of a command that threw: by the error's type and gRPC status (and an encrypted payload's marker). */
export function describeFailure(command: string, error: unknown) {
  const message = error instanceof Error ? error.message : String(error);
  const type = error instanceof Error ? error.name : 'Error';
  const failure = (code: number, text: string, hint?: string) => ({
    code,
    text: `${command}: ${text}\n${hint === undefined ? '' : `${hint}\n`}`,
    json: { error: { exitCode: code, type, message: text, ...(hint === undefined ? {} : { hint }) } },
  });
  if (error instanceof UsageError || error instanceof InputValidationError) {
    return failure(ExitCode.usage, message, `Nothing was started. See "${command} --help".`);
  }
  // A bad variable (TEMPORAL_TLS=maybe, a malformed key ring) is bad input too, refused before connecting.
  if (error instanceof ConfigError || error instanceof CodecKeyError) {
    return failure(ExitCode.usage, message, 'Nothing was sent: fix the environment variable named above.');
  }
  if (error instanceof WorkflowNotFoundError || error instanceof ScheduleNotFoundError) {
    return failure(ExitCode.notFound, `not found: ${message}`);
  }
  if (error instanceof ScheduleAlreadyRunning) return failure(ExitCode.failed, 'the schedule already exists');
  if (message.includes(ENCRYPTED_ENCODING)) {
    return failure(
      ExitCode.failed,
      message,
      `The workflow's payloads are encrypted: set ${PAYLOAD_CODEC_KEYS_VAR} (or ${PAYLOAD_CODEC_KEYS_VAR}_FILE) to read them.`,
    );
  }
  if (error instanceof TemporalUnreachableError) return failure(ExitCode.unavailable, message);
  if (isUnreachableStatus(grpcStatusOf(error))) {
    return failure(ExitCode.unavailable, `Temporal is unreachable: ${message}`);
  }
  return failure(ExitCode.failed, message);
}
