import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the proxy saw: what it was and what the SDK got. */
export interface ProxiedRequest {
  method: string;
  /** The key path, e.g. `/exports/nightly/acme/…/visitors.csv` (path-style). */
  path: string;
  query: URLSearchParams;
  /** x-amz-checksum-*, x-amz-sdk-checksum-algorithm and x-amz-trailer, as sent. */
  checksumHeaders: Record<string, string>;
  status?: number;
  fault?: FaultKind;
}

export type FaultKind = 'status' | 'reset' | 'latency';

export interface ProxyFault {
  /** Which requests it applies to. */
  match: (request: ProxiedRequest) => boolean;
  kind: FaultKind;
  /** `status`: the S3 error to answer (500 InternalError, 503 SlowDown). */
  status?: number;
  code?: string;
  /** `reset`: the connection is destroyed once this many bytes of the body arrived (default 1). */
  afterBytes?: number;
  /** `latency`: added before the request is forwarded. */
  latencyMs?: number;
  /** How many matching requests it applies to (default 1; Infinity for every one). */
  times?: number;
}

export interface S3FaultProxy {
  url: string;
  requests(): ProxiedRequest[];
  add(fault: ProxyFault): void;
  /** Removes every fault not used up yet. */
  clear(): void;
  close(): Promise<void>;
}

/**
 * A real HTTP proxy between the SDK and the S3 server that answers chosen requests with an S3 error, resets the
 * connection in the middle of a request body, or delays them. Everything else is forwarded unchanged (the Host
 * header too, which the SigV4 signature covers), and every request is logged.
 */
export async function startS3FaultProxy(target: string): Promise<S3FaultProxy> {
  const upstream = new URL(target);
  const log: ProxiedRequest[] = [];
  let faults: (ProxyFault & { left: number })[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const entry: ProxiedRequest = {
      method: req.method ?? 'GET',
      path: decodeURIComponent(url.pathname),
      query: url.searchParams,
      checksumHeaders: Object.fromEntries(
        Object.entries(req.headers)
          .filter(([name]) => /^x-amz-(checksum-|sdk-checksum-algorithm|trailer)/.test(name))
          .map(([name, value]) => [name, String(value)]),
      ),
    };
    log.push(entry);
    const fault = faults.find((f) => f.left > 0 && f.match(entry));
    if (fault) {
      fault.left -= 1;
      entry.fault = fault.kind;
    }
    if (fault?.kind === 'status') {
      const status = fault.status ?? 500;
      const code = fault.code ?? (status === 503 ? 'SlowDown' : 'InternalError');
      req.resume();
      req.once('end', () => {
        entry.status = status;
        res.writeHead(status, { 'content-type': 'application/xml' });
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected</Message></Error>`,
        );
      });
      return;
    }
    if (fault?.kind === 'reset') {
      let received = 0;
      const limit = fault.afterBytes ?? 1;
      const cut = (): void => {
        req.socket.destroy();
      };
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= limit) cut();
      });
      req.once('end', cut);
      return;
    }
    const forward = (): void => {
      const headers = { ...req.headers };
      // Hop-by-hop, and never signed: the proxy handles 100-continue itself.
      delete headers.expect;
      delete headers.connection;
      const out = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
        (answer) => {
          entry.status = answer.statusCode ?? 502;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      req.pipe(out);
    };
    if (fault?.kind === 'latency') setTimeout(forward, fault.latencyMs ?? 100);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => [...log],
    add: (fault) => faults.push({ ...fault, left: fault.times ?? 1 }),
    clear: () => {
      faults = [];
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
