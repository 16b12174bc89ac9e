import fs from 'node:fs';
import path from 'node:path';

/** The official Temporal CLI: TEMPORAL_CLI_PATH, else `temporal` on PATH, else undefined. */
export function temporalCliPath(): string | undefined {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (!fs.existsSync(fromEnv)) throw new Error(`TEMPORAL_CLI_PATH: no file at ${fromEnv}`);
    return fromEnv;
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'temporal');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
