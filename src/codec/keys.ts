import fs from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../contract/errors';

/** The environment variable holding the payload keys: `<id>:<base64 of 32 bytes>`, comma-separated, newest first. */
export const PAYLOAD_CODEC_KEYS_VAR = 'PAYLOAD_CODEC_KEYS';

/** The key that encrypts (the first) and every key that may still decrypt (all of them), each 32 bytes. */
export type CodecKeyRing = NonNullable<ReturnType<typeof loadCodecKeys>>;

export class CodecKeyError extends Error {
  override readonly name = 'CodecKeyError';
}

/** `<id>:<key>`, the id of 1-64 letters, digits, ".", "_" or "-". */
const ENTRY = /^\s*([A-Za-z0-9._-]{1,64})\s*:\s*(.*?)\s*$/;

// Messages name the entry by position and id only: the key material must never reach a log.
const entrySchema = z.string().transform((entry, ctx) => {
  const [, id, encoded = ''] = ENTRY.exec(entry) ?? [];
  const key = z.base64().safeParse(encoded).success ? Buffer.from(encoded, 'base64') : undefined;
  if (id !== undefined && key?.length === 32) return { id, key };
  ctx.addIssue({
    code: 'custom',
    message:
      id === undefined
        ? 'must be <id>:<base64 key>, the id of 1-64 letters, digits, ".", "_" or "-"'
        : `key "${id}" must be 32 bytes in base64 (e.g. the output of: openssl rand -base64 32)`,
  });
  return z.NEVER;
});

const keysSchema = z
  .string()
  .transform((value) => value.split(',').filter((entry) => entry.trim() !== ''))
  .pipe(z.array(entrySchema))
  .superRefine((keys, ctx) => {
    const seen = new Set<string>();
    for (const { id } of keys) {
      if (seen.has(id)) ctx.addIssue({ code: 'custom', message: `key id "${id}" appears twice` });
      seen.add(id);
    }
  });

/**
 * Parses the key ring from PAYLOAD_CODEC_KEYS or the file PAYLOAD_CODEC_KEYS_FILE names (both set is an error), or
 * returns undefined when encryption is not configured (neither set, or empty).
 */
export function loadCodecKeys(env: NodeJS.ProcessEnv = process.env) {
  let secret;
  try {
    secret = secretFromEnv(env, PAYLOAD_CODEC_KEYS_VAR);
  } catch (error) {
    throw new CodecKeyError(error instanceof Error ? error.message : String(error));
  }
  if (secret === undefined || secret.value.trim() === '') return undefined;
  const parsed = keysSchema.safeParse(secret.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` (entry ${Number(issue.path[0]) + 1})` : '';
    throw new CodecKeyError(`${secret.source}${where}: ${issue?.message ?? 'is invalid'}`);
  }
  const [active] = parsed.data;
  if (!active) throw new CodecKeyError(`${secret.source}: must name at least one key`);
  return { active, byId: new Map(parsed.data.map((key) => [key.id, key])) };
}

/**
 * A secret given either as `NAME` or as `NAME_FILE`, the path of a file holding it (Docker and Kubernetes
 * secrets). Both set is a ConfigError: which one wins would be a guess. The file's trailing newline is not part
 * of the secret. Messages name the variable and the path, never the content. Its value and `source`, the
 * variable it came from (for messages); undefined when neither is set.
 */
export function secretFromEnv(env: NodeJS.ProcessEnv, name: string) {
  const fileVar = `${name}_FILE`;
  const direct = env[name];
  const file = env[fileVar];
  const hasDirect = direct !== undefined && direct !== '';
  const hasFile = file !== undefined && file !== '';
  if (hasDirect && hasFile) {
    throw new ConfigError(`${name} and ${fileVar} are both set: set one of them, not both`);
  }
  if (hasDirect) return { value: direct, source: name };
  if (!hasFile) return undefined;
  let content: string;
  try {
    content = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(`${fileVar}: cannot read "${file}" (${code})`);
  }
  return { value: content.replace(/\r?\n$/, ''), source: fileVar };
}
