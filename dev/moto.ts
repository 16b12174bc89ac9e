import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports';
import { testPython } from './python';

export interface S3Keys {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface MotoServer {
  url: string;
  /** The server's process (benchmarks read its CPU time). */
  pid: number | undefined;
  bucket: string;
  /** May do anything in S3. */
  writer: S3Keys;
  /** May list and read, not write. */
  reader: S3Keys;
  /**
   * Turns moto's IAM checks on (signatures and permissions, as on AWS) or off. Only while a test needs them:
   * moto 5.2.1 computes the SigV4 signature wrongly for a query with an encoded '/' (ListObjectsV2 with a
   * prefix, UploadPart's uploadId) and refuses those requests with SignatureDoesNotMatch.
   */
  checkAuth(on: boolean): Promise<void>;
  /** Everything moto wrote, for a failure's message. */
  output(): string;
  stop(): Promise<void>;
}

const ACCOUNTS_SCRIPT = path.join(__dirname, 'moto_accounts.py');

/** `python -m moto.server`: the tests' and benchmarks' S3-compatible server (PyPI moto[server], pinned in .ci). */

/**
 * moto's standalone S3-compatible server as a real process on a free port (`<python> -m moto.server`), with
 * its bucket, a writer and a reader: the code under test speaks HTTP to it through the real SDK.
 */
export async function startMoto(bucket = 'exports'): Promise<MotoServer> {
  const port = await freePort();
  const child = spawn(testPython(), ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  try {
    const deadline = Date.now() + 60_000;
    // Werkzeug logs "Running on http://127.0.0.1:<port>" once it listens.
    while (!output.includes(`:${port}`)) {
      if (child.exitCode !== null) throw new Error(`moto exited (${child.exitCode}):\n${output}`);
      if (Date.now() > deadline) throw new Error(`moto did not listen on ${port} within 60 s:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const url = `http://127.0.0.1:${port}`;
    const { stdout } = await promisify(execFile)(testPython(), [ACCOUNTS_SCRIPT, url, bucket]);
    const keys = JSON.parse(stdout) as { writer: S3Keys; reader: S3Keys };
    const checkAuth = async (on: boolean): Promise<void> => {
      // The number of requests moto lets through before it checks them: 0, or never.
      const answer = await fetch(`${url}/moto-api/reset-auth`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: on ? '0' : 'inf',
      });
      if (!answer.ok) throw new Error(`moto reset-auth: HTTP ${answer.status}`);
    };
    const { writer, reader } = keys;
    return { url, pid: child.pid, bucket, writer, reader, checkAuth, output: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
