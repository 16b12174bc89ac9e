import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errors as undiciErrors } from 'undici';
import { MalformedResponseError, NetworkError, TimeoutError } from '../../src/docs-api/errors';
import { errorCode, errorFromTransport } from '../../src/docs-api/transport-errors';

const KEY = 'mint_s3cr3tS3cr3t';
const redact = (text: string) => text.replaceAll(KEY, '[redacted]');

function withCode(message: string, code: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

function transport(error: unknown, responseStarted = false, signal?: AbortSignal) {
  return errorFromTransport({
    operation: 'createJob',
    error,
    signal,
    responseStarted,
    redact,
    requestId: 'r1',
  });
}

describe('errorFromTransport: calls that got no whole answer', () => {
  test('a refused connection was not sent (safe to re-send); a reset may have been processed', () => {
    const refused = transport(withCode('connect ECONNREFUSED', 'ECONNREFUSED'));
    assert.ok(refused instanceof NetworkError);
    assert.equal(refused.safeToRetry, true);
    assert.equal(refused.code, 'ECONNREFUSED');
    const reset = transport(withCode('socket hang up', 'ECONNRESET'));
    assert.ok(reset instanceof NetworkError);
    assert.equal(reset.safeToRetry, false);
    assert.equal(reset.requestId, 'r1');
    const afterResponse = transport(withCode('refused', 'ECONNREFUSED'), true);
    assert.ok(afterResponse instanceof NetworkError && !afterResponse.safeToRetry, 'the response had begun');
  });

  test('a connect timeout is safe to re-send; a headers or body timeout is not', () => {
    const connect = transport(new undiciErrors.ConnectTimeoutError());
    assert.ok(connect instanceof TimeoutError && connect.safeToRetry);
    const headers = transport(new undiciErrors.HeadersTimeoutError());
    assert.ok(headers instanceof TimeoutError && !headers.safeToRetry);
    const body = transport(withCode('body timeout', 'UND_ERR_BODY_TIMEOUT'), true);
    assert.ok(body instanceof TimeoutError && !body.safeToRetry);
  });

  test('a body too large is malformed; messages never hold the key; the caller abort passes through', () => {
    const large = transport(withCode('response body larger than 8 bytes', 'BODY_TOO_LARGE'), true);
    assert.ok(large instanceof MalformedResponseError);
    assert.equal(large.field, 'body');
    const leaky = transport(withCode(`getaddrinfo ENOTFOUND ${KEY}.example`, 'ENOTFOUND'));
    assert.ok(leaky instanceof Error && !leaky.message.includes(KEY));
    const controller = new AbortController();
    const reason = new Error('activity cancelled');
    controller.abort(reason);
    assert.equal(transport(withCode('aborted', 'UND_ERR_ABORTED'), false, controller.signal), reason);
  });

  test('errorCode reads the most telling code along the cause chain', () => {
    const wrapped = withCode('other side closed', 'UND_ERR_SOCKET', withCode('refused', 'ECONNREFUSED'));
    assert.equal(errorCode(wrapped), 'ECONNREFUSED');
    assert.equal(errorCode(withCode('x', 'UND_ERR_SOCKET', withCode('y', 'EPIPE'))), 'EPIPE');
    assert.equal(errorCode(withCode('x', 'UND_ERR_SOCKET')), 'UND_ERR_SOCKET');
    assert.equal(errorCode('not an error'), undefined);
  });
});
