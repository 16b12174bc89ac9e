import { Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { z } from 'zod';
import { DocsProjectIdKey, quoteVisibility } from '../contract/names';
import { intFromText, intInRange, projectIdSchema } from '../contract/validation';

/** Bad command-line arguments: exit code 2, and nothing was started. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const ExitCode = {
  ok: 0,
  /** The operation ran and failed: a failed job or export, a refused follow-up. */
  failed: 1,
  usage: 2,
  notFound: 3,
  unavailable: 4,
} as const;

/** What a command's work gets: a client connected on first use, the task queue it starts on, and --json. */
export interface CommandContext {
  client: () => Promise<Client>;
  taskQueue: string;
  json: boolean;
}

/**
 * Runs a command's work once its flags are read and the connection's environment is checked, nothing connected
 * yet; its result is the exit code. `trace`: the command is the root span of the job or export it starts.
 */
export type Run = (work: (ctx: CommandContext) => Promise<number>, trace?: 'trace') => Promise<void>;

export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`);
}

/**
 * An option whose text `schema` checks as it is read (the contract's schema, where it has one): a bad value is a
 * UsageError naming the flag and the rule, before anything connects.
 */
export function option<U extends string, T>(flags: U, description: string, schema: z.ZodType<T>) {
  return new Option(flags, description).argParser((text: string): T => {
    const checked = schema.safeParse(text);
    if (checked.success) return checked.data;
    const rule = checked.error.issues[0]?.message ?? 'is invalid';
    throw new UsageError(`${flags.split(' ')[0]}: ${rule} (got "${text.slice(0, 60)}")`);
  });
}

export const text = z.string().refine((value) => value.trim() !== '', 'must not be empty');

export const projectOption = (description = 'project id') =>
  option('--project <id>', description, projectIdSchema);

export interface ListedWorkflow {
  workflowId: string;
  workflowStatus: string;
  projectId?: string;
  started: string;
}

/**
 * `<group> list`: workflows of one type from visibility, newest first, of one project (`DocsProjectId`) and a
 * status when given. `columns` adds the command's own fields to each row, `line` is a row's human form.
 */
export function listCommand<E extends object>(
  group: CommandUnknownOpts,
  run: Run,
  spec: {
    noun: string;
    workflowType: string;
    status: string;
    statusRule: z.ZodType<string>;
    clause: (status: string) => string;
    columns: (execution: WorkflowExecutionInfo) => E;
    line: (row: ListedWorkflow & E) => string;
  },
): void {
  group
    .command('list')
    .description(`list ${spec.noun}s by project and status, newest first`)
    .addOption(projectOption(`only ${spec.noun}s of this project (DocsProjectId)`))
    .addOption(option('--status <status>', spec.status, spec.statusRule))
    .addOption(option('--limit <n>', 'at most this many', intFromText(intInRange(1))).default(20))
    .action(({ project, status, limit }) =>
      run(async ({ client, json }) => {
        const clauses = [`WorkflowType = ${quoteVisibility(spec.workflowType)}`];
        if (status) clauses.push(spec.clause(status));
        if (project) clauses.push(`${DocsProjectIdKey.name} = ${quoteVisibility(project)}`);
        const rows: (ListedWorkflow & E)[] = [];
        for await (const execution of (await client()).workflow.list({ query: clauses.join(' AND ') })) {
          const projectId = execution.typedSearchAttributes.get(DocsProjectIdKey);
          rows.push({
            workflowId: execution.workflowId,
            workflowStatus: execution.status.name,
            ...(projectId ? { projectId } : {}),
            started: execution.startTime.toISOString(),
            ...spec.columns(execution),
          });
          if (rows.length >= limit) break;
        }
        print(json, rows, rows.length === 0 ? `no ${spec.noun}s` : rows.map(spec.line).join('\n'));
        return ExitCode.ok;
      }),
    );
}

/** Prints the line `read` gives every `ms`, each time its key changes, until the returned stop() (failed reads are skipped). */
export function watch(read: () => Promise<[key: string, line: string]>, ms: number): () => void {
  let last = '';
  const timer = setInterval(() => {
    read().then(
      ([key, line]) => {
        if (key !== last) process.stdout.write(`${line}\n`);
        last = key;
      },
      () => undefined,
    );
  }, ms);
  return () => clearInterval(timer);
}
