import fs from 'node:fs';
import { ConfigError } from './contract/errors';

/** A secret as read from the environment, and the variable it came from (`NAME` or `NAME_FILE`), for messages. */
export interface EnvSecret {
  value: string;
  source: string;
}

/**
 * A secret given either as `NAME` or as `NAME_FILE`, the path of a file holding it (Docker and Kubernetes
 * secrets). Both set is a ConfigError: which one wins would be a guess. The file's trailing newline is not part
 * of the secret. Messages name the variable and the path, never the content. Undefined when neither is set.
 */
export function secretFromEnv(env: NodeJS.ProcessEnv, name: string): EnvSecret | undefined {
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
