import { ScheduleAlreadyRunning, ScheduleNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import { grpcStatusOf, isUnreachableStatus, TemporalUnreachableError } from '../client/connect';
import { ENCRYPTED_ENCODING } from '../codec/aes-gcm-codec';
import { CodecKeyError, PAYLOAD_CODEC_KEYS_VAR } from '../codec/keys';
import { ConfigError } from '../contract/errors';
import { InputValidationError } from '../contract/validation';
import { ExitCode, UsageError } from './usage-error';

/** Prints a result: JSON with --json, else the human form. */
export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`);
}

/** A command's failure: its exit code, the text printed, and the object printed instead under --json. */
export interface CommandFailure {
  code: number;
  text: string;
  json: { error: { exitCode: number; type: string; message: string; hint?: string } };
}

/** The exit code and the message of a command that threw: by the error's type and gRPC status, never its text. */
export function describeFailure(command: string, error: unknown): CommandFailure {
  const message = error instanceof Error ? error.message : String(error);
  const type = error instanceof Error ? error.name : 'Error';
  const failure = (code: number, text: string, hint?: string): CommandFailure => ({
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
  if (error instanceof ScheduleAlreadyRunning) {
    return failure(ExitCode.failed, 'the schedule already exists');
  }
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

/** Where the CLI's own lines go (help, version, failures): the process's streams, or a test's. */
export interface CliStreams {
  stdout: { write: (text: string) => unknown };
  stderr: { write: (text: string) => unknown };
}

/** Prints a failure on stderr, as JSON with --json; returns its exit code. */
export function reportFailure(command: string, error: unknown, json: boolean, io: CliStreams): number {
  const failure = describeFailure(command, error);
  io.stderr.write(json ? `${JSON.stringify(failure.json)}\n` : failure.text);
  return failure.code;
}
