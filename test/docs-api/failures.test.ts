import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errors as undiciErrors } from 'undici';
import { DOCS_API_FAILURES, DocsApiFailureType } from '../../src/contract/failure-types';
import {
  bodyExcerpt,
  docsApiFailure,
  errorCode,
  parseRetryAfter,
  serviceMessage,
  statusFailure,
  transportFailure,
} from '../../src/docs-api/failures';
import { answerOf, parseJobAnswer } from '../../src/docs-api/schemas';
import { failureView } from './failure-view';

const KEY = 'mint_s3cr3tS3cr3t';
const redact = (text: string) => text.replaceAll(KEY, '[redacted]');
const facts = { operation: 'getJob' } as const;

function mapped(status: number, text = '', headers: Record<string, string> = {}) {
  const warnings: string[] = [];
  const error = statusFailure({ status, text, header: (name) => headers[name] }, facts, {
    redact,
    onWarning: (warning) => warnings.push(warning),
  });
  return { error: failureView(error), warnings };
}

describe('docsApiFailure: one shape, its type from one table', () => {
  test('429 with Retry-After: retryable, nextRetryDelay from Retry-After, safe to re-send', () => {
    const failure = docsApiFailure('rateLimited', 'rate limited', {
      operation: 'createJob',
      status: 429,
      requestId: 'req_1',
      retryAfterMs: 7000,
    });
    assert.equal(failure.type, DocsApiFailureType.rateLimited);
    assert.equal(failure.message, 'createJob: rate limited | HTTP 429 | request id req_1');
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.nextRetryDelay, 7000);
    assert.deepEqual(failure.details, [
      { operation: 'createJob', status: 429, requestId: 'req_1', retryAfterMs: 7000, safeToRetry: true },
    ]);
  });

  test('the refusals are made non-retryable: they end the retries of any activity', () => {
    const kinds = Object.keys(DOCS_API_FAILURES) as (keyof typeof DOCS_API_FAILURES)[];
    const refusals = kinds.map((kind) => docsApiFailure(kind, 'x', { operation: 'getJob' }));
    const types = refusals.filter((failure) => failure.nonRetryable).map((failure) => failure.type);
    assert.deepEqual([...new Set(types)].sort(), [
      'AuthError',
      'ConflictError',
      'InvalidArgumentError',
      'InvalidRequestError',
      'NotFoundError',
      'RedirectError',
    ]);
  });

  test('the operator opt-in marks transient failures safe to re-send, never refusals', () => {
    const view = (kind: Parameters<typeof docsApiFailure>[0], retryUnknownOutcome?: boolean) =>
      failureView(docsApiFailure(kind, 'x', { operation: 'createJob', retryUnknownOutcome }));
    assert.equal(view('noAnswer').safeToRetry, false);
    assert.equal(view('noAnswer', true).safeToRetry, true);
    assert.equal(view('conflict', true).safeToRetry, true, 'a refusal: the service did not act');
    assert.equal(view('conflict', true).retryable, false);
  });
});

describe('statusFailure: one failure type per status family', () => {
  test('each status maps to its failure type, retryable and safeToRetry as documented', () => {
    const cases: [number, string, boolean, boolean][] = [
      // status, failure type, retryable, safeToRetry
      [400, DocsApiFailureType.invalidRequest, false, true],
      [422, DocsApiFailureType.invalidRequest, false, true],
      [401, DocsApiFailureType.auth, false, true],
      [403, DocsApiFailureType.auth, false, true],
      [404, DocsApiFailureType.notFound, false, true],
      [409, DocsApiFailureType.conflict, false, true],
      [429, DocsApiFailureType.rateLimited, true, true],
      [408, DocsApiFailureType.timeout, true, true],
      [500, DocsApiFailureType.server, true, false],
      [502, DocsApiFailureType.server, true, false],
      [503, DocsApiFailureType.server, true, true],
      [418, DocsApiFailureType.invalidRequest, false, true],
      [302, DocsApiFailureType.redirect, false, true],
      [101, DocsApiFailureType.malformedResponse, true, false],
    ];
    for (const [status, type, retryable, safeToRetry] of cases) {
      const { error } = mapped(status);
      assert.deepEqual(
        { status, name: error.type, retryable: error.retryable, safeToRetry: error.safeToRetry },
        { status, name: type, retryable, safeToRetry },
      );
    }
  });

  test("the service's message is in the error, the key is not", () => {
    const body = JSON.stringify({ error: `bad key ${KEY}`, details: [{ message: 'prefix unknown' }] });
    const { error } = mapped(401, body);
    assert.match(error.message, /not authorized: bad key \[redacted\] \(prefix unknown\)/);
    assert.ok(!error.message.includes(KEY));
    assert.match(mapped(403).error.message, /forbidden: .*read-only key.*HTTP 403/);
  });

  test('Retry-After of a 429 or 5xx is kept; a longer one than allowed is clamped, with a warning', () => {
    const { error, warnings } = mapped(429, '', { 'retry-after': '7' });
    assert.equal(error.retryAfterMs, 7000);
    assert.deepEqual(warnings, []);
    const clamped = mapped(503, '', { 'retry-after': '7200' });
    assert.equal(clamped.error.retryAfterMs, 3_600_000);
    assert.deepEqual(clamped.warnings, ['Retry-After asked for 7200s, clamped to 3600s']);
    assert.match(clamped.error.message, /clamped to 3600s/);
  });

  test('a redirect names where it points, redacted, and is not followed', () => {
    const { error } = mapped(301, '', { location: `https://elsewhere.example/?k=${KEY}` });
    assert.equal(error.type, DocsApiFailureType.redirect);
    assert.match(error.message, /redirected to https:\/\/elsewhere\.example\/\?k=\[redacted\], not followed/);
    assert.match(error.message, /set DOCS_API_BASE_URL/);
  });
});

describe('serviceMessage: what an error body says', () => {
  test('the service shape, the common shapes, and bodies that say nothing', () => {
    assert.equal(serviceMessage('{"error":"nope"}'), 'nope');
    assert.equal(serviceMessage('{"error":{"message":"nested"}}'), 'nested');
    assert.equal(serviceMessage('{"message":"plain"}'), 'plain');
    assert.equal(
      serviceMessage(
        '{"error":"bad dates","details":[{"message":"dateFrom after dateTo"},{"message":"bad dates"}]}',
      ),
      'bad dates (dateFrom after dateTo)',
    );
    assert.equal(serviceMessage('{"error":42,"message":"the rest is read"}'), 'the rest is read');
    assert.equal(serviceMessage('<html>Bad gateway</html>'), undefined);
    assert.equal(serviceMessage('{}'), undefined);
    assert.equal(serviceMessage(JSON.stringify({ error: 'x'.repeat(500) }))?.length, 200);
  });

  test('bodyExcerpt folds whitespace, cuts at 200 characters with "…", and redacts the key', () => {
    assert.equal(bodyExcerpt(`  a\n\n b\t${KEY} `, redact), 'a b [redacted]');
    const long = bodyExcerpt('y'.repeat(300), redact);
    assert.equal(long.length, 200);
    assert.ok(long.endsWith('…'));
  });
});

describe('answerOf: a 2xx answer, or a MalformedResponseError failure', () => {
  const job = { id: 'job_1', status: 'active', prLink: null };
  const json = 'application/json';
  const answer = (_status: number, text: string, contentType = '') => ({ text, contentType });

  test('a documented answer is parsed; JSON without its content type is used, with a warning', () => {
    const warnings: string[] = [];
    const options = { namesJob: true, onWarning: (w: string) => warnings.push(w) };
    assert.equal(
      answerOf(answer(200, JSON.stringify(job), json), parseJobAnswer, facts, options).id,
      'job_1',
    );
    assert.deepEqual(warnings, []);
    assert.equal(answerOf(answer(200, JSON.stringify(job)), parseJobAnswer, facts, options).id, 'job_1');
    assert.deepEqual(warnings, ['response content-type "none": the body was read as JSON']);
  });

  test('not JSON, or a field that breaks the schema, names what is wrong and keeps a named job', () => {
    const malformed = (response: ReturnType<typeof answer>, namesJob = true) => {
      try {
        answerOf(response, parseJobAnswer, facts, { namesJob });
      } catch (error) {
        const failure = failureView(error, DocsApiFailureType.malformedResponse);
        assert.equal(failure.safeToRetry, false);
        return failure;
      }
      assert.fail('expected MalformedResponseError');
    };
    assert.equal(malformed(answer(200, '<html>', 'text/html')).field, 'content-type');
    assert.equal(malformed(answer(200, '{', json)).field, 'body');
    const noStatus = malformed(answer(201, JSON.stringify({ id: 42, prLink: null }), json));
    assert.equal(noStatus.field, 'status');
    assert.equal(noStatus.jobId, '42', 'a numeric id is kept as its digits');
    assert.match(noStatus.message, /the answer names job 42/);
    assert.equal(malformed(answer(200, JSON.stringify({ id: 'x' }), json), false).jobId, undefined);
  });
});

function withCode(message: string, code: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

/** `status`: the response had begun. */
function transport(error: unknown, status?: number) {
  return failureView(
    transportFailure(
      error,
      { operation: 'createJob', status, requestId: 'r1' },
      { signal: undefined, redact },
    ),
  );
}

const { network, timeout } = DocsApiFailureType;

describe('transportFailure: calls that got no whole answer', () => {
  test('a refused connection was not sent (safe to re-send); a reset may have been processed', () => {
    const refused = transport(withCode('connect ECONNREFUSED', 'ECONNREFUSED'));
    assert.deepEqual([refused.type, refused.safeToRetry], [network, true]);
    assert.match(refused.message, /connection failed \(ECONNREFUSED\)/);
    const reset = transport(withCode('socket hang up', 'ECONNRESET'));
    assert.deepEqual([reset.type, reset.safeToRetry, reset.requestId], [network, false, 'r1']);
    const afterResponse = transport(withCode('refused', 'ECONNREFUSED'), 200);
    assert.deepEqual(
      [afterResponse.type, afterResponse.safeToRetry],
      [network, false],
      'the response had begun',
    );
  });

  test('a connect timeout is safe to re-send; a headers or body timeout is not', () => {
    const connect = transport(new undiciErrors.ConnectTimeoutError());
    assert.deepEqual([connect.type, connect.safeToRetry], [timeout, true]);
    const headers = transport(new undiciErrors.HeadersTimeoutError());
    assert.deepEqual([headers.type, headers.safeToRetry], [timeout, false]);
    const body = transport(withCode('body timeout', 'UND_ERR_BODY_TIMEOUT'), 200);
    assert.deepEqual([body.type, body.safeToRetry], [timeout, false]);
  });

  test('a body too large is malformed; messages never hold the key; the caller abort passes through', () => {
    const large = transport(withCode('response body larger than 8 bytes', 'BODY_TOO_LARGE'), 200);
    assert.deepEqual([large.type, large.field], [DocsApiFailureType.malformedResponse, 'body']);
    const leaky = transport(withCode(`getaddrinfo ENOTFOUND ${KEY}.example`, 'ENOTFOUND'));
    assert.ok(!leaky.message.includes(KEY));
    const controller = new AbortController();
    const reason = new Error('activity cancelled');
    controller.abort(reason);
    const aborted = transportFailure(
      withCode('aborted', 'UND_ERR_ABORTED'),
      { operation: 'createJob' },
      { signal: controller.signal, redact },
    );
    assert.equal(aborted, reason);
  });

  test('errorCode reads the most telling code along the cause chain', () => {
    const wrapped = withCode('other side closed', 'UND_ERR_SOCKET', withCode('refused', 'ECONNREFUSED'));
    assert.equal(errorCode(wrapped), 'ECONNREFUSED');
    assert.equal(errorCode(withCode('x', 'UND_ERR_SOCKET', withCode('y', 'EPIPE'))), 'EPIPE');
    assert.equal(errorCode(withCode('x', 'UND_ERR_SOCKET')), 'UND_ERR_SOCKET');
    assert.equal(errorCode('not an error'), undefined);
  });
});

describe('parseRetryAfter', () => {
  test('Retry-After in seconds', () => {
    assert.equal(parseRetryAfter('120'), 120_000);
    assert.equal(parseRetryAfter(' 0 '), 0);
    assert.equal(parseRetryAfter('1.5'), 1500);
  });

  test('Retry-After as an HTTP date, relative to now', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 09:59:00 GMT', now), 0, 'a date in the past means now');
  });

  test('absent or unparseable Retry-After', () => {
    assert.equal(parseRetryAfter(undefined), undefined);
    assert.equal(parseRetryAfter('soon'), undefined);
    assert.equal(parseRetryAfter('-5'), undefined);
  });
});
