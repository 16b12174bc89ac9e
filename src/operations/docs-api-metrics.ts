import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { ForwardingHandler } from '../docs-api/forwarding-handler';
import { statusClass } from '../contract/metrics';
import type { WorkerMetrics } from './metrics';

/** The service's operations by method and path (after any base path); anything else is `other`. */
const ENDPOINTS: [method: string, path: RegExp, endpoint: string][] = [
  ['POST', /\/v2\/agent\/[^/]+\/job$/, 'createJob'],
  ['GET', /\/v2\/agent\/[^/]+\/job\/[^/]+$/, 'getJob'],
  ['POST', /\/v2\/agent\/[^/]+\/job\/[^/]+\/message$/, 'sendMessage'],
  ['GET', /\/v1\/analytics\/[^/]+\/visitors$/, 'getVisitors'],
];

export const ENDPOINT_NAMES = [...ENDPOINTS.map(([, , endpoint]) => endpoint), 'other'];

export function endpointOf(method: string, path: string): string {
  const pathOnly = path.split('?')[0] ?? path;
  return ENDPOINTS.find(([m, pattern]) => m === method && pattern.test(pathOnly))?.[2] ?? 'other';
}

/**
 * An undici interceptor on the documentation service's client: every request counted by endpoint and status
 * class, timed, and every 429 counted. The HTTP layer is the one place every request passes, whichever activity
 * (or workflow version) sends it.
 */
export function countDocsApiRequests(metrics: WorkerMetrics): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => {
    const endpoint = endpointOf(options.method, options.path ?? '/');
    return dispatch(options, new CountingHandler(metrics, endpoint, handler));
  };
}

class CountingHandler extends ForwardingHandler {
  readonly #metrics: WorkerMetrics;
  readonly #endpoint: string;
  readonly #startedAt = performance.now();
  #statusCode: number | undefined;
  #counted = false;
  #aborted = false;

  constructor(metrics: WorkerMetrics, endpoint: string, handler: Dispatcher.DispatchHandler) {
    super(handler);
    this.#metrics = metrics;
    this.#endpoint = endpoint;
  }

  override onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.#statusCode = statusCode;
    super.onResponseStart(controller, statusCode, headers, statusMessage);
  }

  override onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.#count();
    super.onResponseEnd(controller, trailers);
  }

  override onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.#aborted = isAbort(error);
    this.#count();
    super.onResponseError(controller, error);
  }

  /** Once per request: an answer whose body then fails still has its status class. */
  #count(): void {
    if (this.#counted) return;
    this.#counted = true;
    const endpoint = this.#endpoint;
    const status_class = this.#aborted ? 'aborted' : statusClass(this.#statusCode);
    this.#metrics.record('serviceRequests', 1, { endpoint, status_class });
    this.#metrics.record('serviceRequestSeconds', (performance.now() - this.#startedAt) / 1000, { endpoint });
    if (this.#statusCode === 429) this.#metrics.record('serviceRateLimited', 1, { endpoint });
  }
}

/** The worker's own cancellation (an activity cancelled, a prefetched page no longer needed): not the service's. */
function isAbort(error: Error): boolean {
  return error.name === 'AbortError' || (error as { code?: unknown }).code === 'UND_ERR_ABORTED';
}
