import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../src/cli/main';
import { packageVersion } from '../../src/config';

// Every refusal here happens before the CLI connects: TEMPORAL_ADDRESS names a listener that counts connections,
// and none may arrive. No Temporal server is involved.

let listener: net.Server;
let connections = 0;
let address = '';

before(async () => {
  listener = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  address = `127.0.0.1:${(listener.address() as net.AddressInfo).port}`;
});
after(() => listener.close());

/** Runs the CLI in this process with these variables set (and TEMPORAL_ADDRESS at the counting listener). */
async function cli(
  argv: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const vars = { TEMPORAL_ADDRESS: address, ...env };
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  Object.assign(process.env, vars);
  const out = { stdout: '', stderr: '' };
  const io = {
    stdout: { write: (text: string) => (out.stdout += text) },
    stderr: { write: (text: string) => (out.stderr += text) },
  };
  try {
    return { code: await runCli(argv, io), ...out };
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

const day = ['--project', 'p', '--from', '2026-11-01', '--to', '2026-11-02'];

describe('the CLI refuses bad input before it connects: exit 2, naming the flag and the rule', () => {
  const cases: [string, string[], RegExp][] = [
    [
      'a project id with a space',
      ['job', 'start', '--project', 'ac me', '--prompt', 'x'],
      /--project: must start/,
    ],
    [
      'a month 13',
      ['export', 'run', '--project', 'p', '--from', '2026-13-01', '--to', '2026-12-01'],
      /--from: must be YYYY-MM-DD/,
    ],
    [
      'a time of day 25:99',
      ['schedule', 'create', '--project', 'p', '--at', '25:99'],
      /--at: must be a time of day HH:MM/,
    ],
    [
      'concurrency 99',
      ['export', 'run', ...day, '--concurrency', '99'],
      /--concurrency: must be at most 16 \(got "99"\)/,
    ],
    [
      'an inverted range',
      ['export', 'run', '--project', 'p', '--from', '2026-11-02', '--to', '2026-11-01'],
      /--to: must be after dateFrom/,
    ],
    [
      'intervals out of order',
      ['job', 'start', '--project', 'p', '--prompt', 'x', '--initial-interval', '5m', '--max-interval', '1s'],
      /--max-interval: must be at least initialInterval/,
    ],
    ['an empty prompt', ['job', 'start', '--project', 'p', '--prompt', ''], /--prompt: must not be empty/],
    [
      'a free-text job status',
      ['job', 'list', '--status', 'done-ish'],
      /--status: must be a status in lowercase letters, digits and _, e.g. creating, active, completed, archived, failed, paused_for_review/,
    ],
    [
      'an export status of no state',
      ['export', 'list', '--status', 'Sleeping'],
      /--status: must be one of Running/,
    ],
    [
      'a backfill ending where it starts',
      ['schedule', 'backfill', '--project', 'p', '--from', '2026-11-02', '--to', '2026-11-02'],
      /--to: must be after --from \(the end day is excluded\)/,
    ],
    [
      'a zone that does not exist',
      ['schedule', 'update', '--project', 'p', '--tz', 'Mars/Olympus'],
      /--tz: must be an IANA time zone/,
    ],
    ['a limit of 0', ['export', 'list', '--limit', '0'], /--limit: must be at least 1/],
    ['an empty --address', ['job', 'list', '--address', ''], /--address: must not be empty/],
    ['an unknown flag', ['job', 'status', '--bogus', 'x'], /unknown option '--bogus'/],
  ];
  for (const [name, argv, message] of cases) {
    test(name, async () => {
      const run = await cli(argv);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
      assert.match(run.stderr, /Nothing was started\. See "docs-agent .* --help"\./);
      assert.equal(connections, 0, 'nothing connected');
    });
  }

  test('a bad environment is refused the same way: TEMPORAL_TLS, PAYLOAD_CODEC_KEYS, a key and its _FILE', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'docs-agent-cli-'));
    try {
      const keysFile = path.join(dir, 'keys');
      await fs.writeFile(keysFile, `k1:${Buffer.alloc(32, 7).toString('base64')}\n`);
      for (const [env, message] of [
        [{ TEMPORAL_TLS: 'maybe' }, /TEMPORAL_TLS: must be true or false \(got "maybe"\)/],
        [{ PAYLOAD_CODEC_KEYS: 'not-a-key' }, /PAYLOAD_CODEC_KEYS \(entry 1\): must be <id>:<base64 key>/],
        [
          { PAYLOAD_CODEC_KEYS_FILE: path.join(dir, 'missing') },
          /PAYLOAD_CODEC_KEYS_FILE: cannot read ".*missing" \(ENOENT\)/,
        ],
        [
          {
            PAYLOAD_CODEC_KEYS: `k2:${Buffer.alloc(32, 1).toString('base64')}`,
            PAYLOAD_CODEC_KEYS_FILE: keysFile,
          },
          /PAYLOAD_CODEC_KEYS and PAYLOAD_CODEC_KEYS_FILE are both set: set one of them, not both/,
        ],
      ] as const) {
        const run = await cli(['job', 'list'], env);
        assert.equal(run.code, 2, `${JSON.stringify(env)}: ${run.stderr}`);
        assert.match(run.stderr, message);
        assert.doesNotMatch(run.stderr, /AAAA|BwcH/, 'no key material in the message');
      }
      assert.equal(connections, 0, 'nothing connected');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('--json: the refusal is one JSON object with the exit code, the type and the message', async () => {
    const run = await cli(['export', 'run', ...day, '--page-size', 'lots', '--json']);
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    const { error } = JSON.parse(run.stderr) as {
      error: { exitCode: number; type: string; message: string };
    };
    assert.deepEqual(
      { exitCode: error.exitCode, type: error.type, message: error.message },
      { exitCode: 2, type: 'UsageError', message: '--page-size: must be an integer (got "lots")' },
    );
    const unknown = await cli(['job', 'launch', '--json']);
    assert.equal(unknown.code, 2);
    assert.equal(
      (JSON.parse(unknown.stderr) as { error: { message: string } }).error.message,
      "unknown command 'launch'",
    );
    const tls = await cli(['job', 'list', '--json'], { TEMPORAL_TLS: 'maybe' });
    assert.equal((JSON.parse(tls.stderr) as { error: { type: string } }).error.type, 'ConfigError');
  });
});

describe('help and version, everywhere', () => {
  test('-h and --help at every level; --version at every level', async () => {
    for (const argv of [['-h'], ['--help'], ['job', '-h'], ['schedule', '--help'], ['export', 'run', '-h']]) {
      const run = await cli(argv);
      assert.equal(run.code, 0, `${argv.join(' ')}: ${run.stderr}`);
      assert.match(run.stdout, /^Usage: docs-agent/);
    }
    for (const argv of [['--version'], ['job', '--version'], ['job', 'start', '--version']]) {
      const run = await cli(argv);
      assert.equal(run.code, 0, argv.join(' '));
      assert.equal(run.stdout, `docs-agent ${packageVersion()}\n`);
    }
    assert.match(packageVersion(), /^\d+\.\d+\.\d+/);
  });

  test("a command's help names the connection flags, the variables it reads and the date convention", async () => {
    const exportRun = (await cli(['export', 'run', '--help'])).stdout;
    for (const text of ['--address <host:port>', '--namespace <name>', '--profile <name>', '--detach']) {
      assert.ok(exportRun.includes(text), text);
    }
    for (const variable of [
      'TEMPORAL_ADDRESS',
      'TEMPORAL_API_KEY',
      'TEMPORAL_TLS',
      'PAYLOAD_CODEC_KEYS_FILE',
      'TEMPORAL_TASK_QUEUE',
      'OTEL_',
    ]) {
      assert.ok(exportRun.includes(variable), variable);
    }
    assert.match(exportRun, /--to is the day after the last, excluded/);
    assert.match(
      (await cli(['schedule', 'backfill', '--help'])).stdout,
      /--to is the day after the last, excluded/,
    );
    const update = (await cli(['schedule', 'update', '--help'])).stdout.split('Global Options:')[0] ?? '';
    assert.match(update, /--catchup-window <duration> +[^-]*\(unchanged when not given\)/);
    assert.doesNotMatch(update, /default/, 'update applies no default, so it promises none');
    assert.equal(connections, 0);
  });
});

describe('the connection flags override the environment', () => {
  test('--address wins over TEMPORAL_ADDRESS, and an unreachable one is named with its source (exit 4)', async () => {
    const run = await cli(['job', 'list', '--address', address, '--json'], {
      TEMPORAL_ADDRESS: '127.0.0.1:1',
    });
    // The listener accepts and drops: the CLI reached the --address, not TEMPORAL_ADDRESS.
    assert.equal(run.code, 4, run.stderr);
    assert.ok(connections > 0, 'connected to --address');
    const { error } = JSON.parse(run.stderr) as { error: { message: string } };
    assert.match(error.message, new RegExp(`^Temporal at ${address} \\(--address\\) is unreachable`));
    assert.match(error.message, /, that --address names it,/);
    connections = 0;
  });
});
