import type { Dispatcher } from 'undici';

export type ResponseHeaders = Dispatcher.ResponseData['headers'];

/** The largest body read; a larger one fails the call (code BODY_TOO_LARGE) instead of filling the memory. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Headers that carry a request id, by the proxies and services that set them, first found wins. */
export const REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'x-amzn-requestid', 'cf-ray'];

/** The first non-empty value of the first of `names` present. */
export function firstHeader(headers: ResponseHeaders, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = headers[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined && first !== '') return first;
  }
  return undefined;
}

/** The whole body as UTF-8 text, at most MAX_BODY_BYTES. */
export async function readText(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) {
      body.destroy();
      throw Object.assign(new Error(`response body larger than ${MAX_BODY_BYTES} bytes`), {
        code: 'BODY_TOO_LARGE',
      });
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
