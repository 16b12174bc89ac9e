#!/usr/bin/env node
import { runCli } from './cli/main';
import { ExitCode } from './cli/command';

runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(ExitCode.failed);
  },
);
