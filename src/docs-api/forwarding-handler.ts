import type { IncomingHttpHeaders } from 'node:http';
import { DecoratorHandler, type Dispatcher } from 'undici';

/** The response hooks of undici's current handler API, which interceptors of the client override. */
export interface ResponseHooks extends Dispatcher.DispatchHandler {
  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void;
  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void;
  onResponseError(controller: Dispatcher.DispatchController, error: Error): void;
}

/**
 * undici's DecoratorHandler forwards the current handler API (and adapts the older one `request()` may pass);
 * its published types still name only the older methods.
 */
export const ForwardingHandler = DecoratorHandler as unknown as new (
  handler: Dispatcher.DispatchHandler,
) => ResponseHooks;
