import { parseArgs } from 'node:util';
import { z } from 'zod';
import { startSimulator } from './server';

const flagsSchema = z.object({
  port: z.coerce.number({ error: '--port must be a number' }).int().min(0).max(65535),
  host: z.string().min(1),
  paths: z.coerce.number({ error: '--paths must be a number' }).int().min(0),
  'job-duration-ms': z.coerce.number({ error: '--job-duration-ms must be a number' }).int().min(0),
  outcome: z.enum(['completed', 'completed-no-edits', 'failed', 'archived'], {
    error: '--outcome must be completed, completed-no-edits, failed or archived',
  }),
  'print-key': z.boolean(),
});

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string', default: '4010' },
        host: { type: 'string', default: '127.0.0.1' },
        paths: { type: 'string', default: '120' },
        'job-duration-ms': { type: 'string', default: '20000' },
        outcome: { type: 'string', default: 'completed' },
        'print-key': { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  const parsed = flagsSchema.safeParse(values);
  if (!parsed.success) fail(parsed.error.issues.map((i) => i.message).join('; '));
  const flags = parsed.data;
  const envKey = process.env.DOCS_API_KEY;
  if (envKey !== undefined && !/^[A-Za-z0-9]+_\S+$/.test(envKey))
    fail('DOCS_API_KEY must have the form <prefix>_<secret>');
  const sim = await startSimulator({
    port: flags.port,
    host: flags.host,
    ...(envKey ? { apiKey: envKey } : {}),
    jobs: { durationMs: flags['job-duration-ms'], outcome: flags.outcome },
    analytics: { paths: flags.paths },
  });
  if (!envKey) {
    const prefix = sim.apiKey.split('_')[0] ?? 'sim';
    console.log(
      flags['print-key']
        ? `generated API key: ${sim.apiKey}`
        : `generated API key ${prefix}_**** (--print-key shows it)`,
    );
  }
  console.log(`simulator listening on ${sim.url}`);
  const stop = (): void => void sim.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function fail(message: string): never {
  console.error(`simulator: ${message}`);
  process.exit(2);
}

void main();
