import { maskKey, parseCli, USAGE } from './cli';
import { startSimulator } from './server';

/** The standalone simulator: `tsx dev/simulator/main.ts [--port 4010] …` (see USAGE); exit code 2 for bad flags. */
async function main(): Promise<void> {
  const parsed = parseCli(process.argv.slice(2), process.env);
  if (!parsed.ok) {
    console.error(`simulator: ${parsed.message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const config = parsed.config;
  if (config.help) {
    console.log(USAGE);
    return;
  }
  const sim = await startSimulator({
    host: config.host,
    port: config.port,
    ...(config.apiKey !== undefined ? { apiKey: config.apiKey } : {}),
    jobs: { durationMs: config.jobDurationMs, outcome: config.outcome },
    analytics: { paths: config.paths },
    errorBodies: config.errorBodies,
  });
  if (config.apiKey === undefined) {
    console.log(
      config.printKey
        ? `DOCS_API_KEY is not set: generated API key ${sim.apiKey}`
        : `DOCS_API_KEY is not set: generated API key ${maskKey(sim.apiKey)} (--print-key prints it)`,
    );
  } else {
    console.log(`accepting the API key from DOCS_API_KEY (${maskKey(config.apiKey)})`);
  }
  console.log(`simulator listening on ${sim.url}`);

  const stop = (signal: NodeJS.Signals): void => {
    console.log(`simulator: ${signal}, stopping`);
    // A second signal while closing stops at once.
    process.once(signal, () => process.exit(130));
    void sim.close().then(() => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(`simulator: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
