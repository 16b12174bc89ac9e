import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP JSON export carries it (ids in hex), with its attributes flattened to strings. */
export interface ReceivedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, string>;
}

export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  url: string;
  /** The spans received (empty with keepSpans false). */
  spans: ReceivedSpan[];
  spanCount(): number;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        name: string;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        attributes?: KeyValue[];
      }[];
    }[];
  }[];
}

/**
 * An OTLP/HTTP trace receiver that takes `http/json` (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and records every
 * span (or only counts them: benchmarks), as a collector or Jaeger would receive them. Any other content type is refused with 415.
 */
export async function startOtlpReceiver(options: { keepSpans?: boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let count = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      if (!String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      const received = spansOf(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest);
      count += received.length;
      if (options.keepSpans !== false) spans.push(...received);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    spanCount: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function spansOf(request: ExportRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = flatten(resourceSpans.resource?.attributes)['service.name'] ?? '';
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        name: span.name,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        attributes: flatten(span.attributes),
      })),
    );
  });
}

function flatten(attributes: KeyValue[] | undefined): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const { key, value } of attributes ?? []) {
    flat[key] = String(value?.stringValue ?? value?.intValue ?? value?.boolValue ?? value?.doubleValue ?? '');
  }
  return flat;
}
