import { after, before } from 'node:test';
import { S3Client } from '@aws-sdk/client-s3';
import { startMoto, type MotoServer, type S3Keys } from '../../dev/moto';
import { startS3FaultProxy, type S3FaultProxy } from '../../dev/s3-fault-proxy';

/** moto with a fault proxy in front: what the tests' workers talk to (`url`), and a client for the checks. */
export interface S3TestServer {
  moto: MotoServer;
  proxy: S3FaultProxy;
  /** The proxy: point the worker here. */
  url: string;
  bucket: string;
  /** A client straight to moto (no faults) as the writer, to look at what the worker left. */
  client: S3Client;
  /** The worker process's environment for EXPORT_DIR `s3://<bucket>/<prefix>` through the proxy. */
  workerEnv(prefix: string, keys?: S3Keys): Record<string, string>;
  stop(): Promise<void>;
}

export async function startS3TestServer(): Promise<S3TestServer> {
  const moto = await startMoto();
  let proxy: S3FaultProxy;
  try {
    proxy = await startS3FaultProxy(moto.url);
  } catch (error) {
    await moto.stop();
    throw error;
  }
  const client = new S3Client({
    endpoint: moto.url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: moto.writer,
  });
  return {
    moto,
    proxy,
    url: proxy.url,
    bucket: moto.bucket,
    client,
    workerEnv: (prefix, keys = moto.writer) => ({
      EXPORT_DIR: `s3://${moto.bucket}/${prefix}`,
      EXPORT_S3_FORCE_PATH_STYLE: 'true',
      AWS_ENDPOINT_URL_S3: proxy.url,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: keys.accessKeyId,
      AWS_SECRET_ACCESS_KEY: keys.secretAccessKey,
    }),
    async stop() {
      client.destroy();
      try {
        await proxy.close();
      } finally {
        await moto.stop();
      }
    },
  };
}

/**
 * The test file's S3 server and the stack that uses it, started in one hook (the stack needs the server's
 * address) before the file's first test and stopped after its last, the stack first.
 */
export function useS3Stack<S extends { stop(): Promise<void> }>(
  start: (s3: S3TestServer) => Promise<S>,
): { s3: () => S3TestServer; stack: () => S } {
  let s3: S3TestServer | undefined;
  let stack: S | undefined;
  before(async () => {
    s3 = await startS3TestServer();
    try {
      stack = await start(s3);
    } catch (error) {
      await s3.stop();
      s3 = undefined;
      throw error;
    }
  });
  after(async () => {
    try {
      await stack?.stop();
    } finally {
      await s3?.stop();
    }
  });
  return {
    s3: () => s3 ?? fail('S3 server'),
    stack: () => stack ?? fail('stack'),
  };
}

function fail(what: string): never {
  throw new Error(`the ${what} is not running: read it inside a test or hook (or it failed to start)`);
}
