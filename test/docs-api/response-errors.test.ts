import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DocsApiFailureType } from '../../src/contract/failure-types';
import type { DocsApiErrorInit } from '../../src/docs-api/errors';
import { MalformedResponseError, RedirectError } from '../../src/docs-api/errors';
import {
  answerOf,
  bodyExcerpt,
  errorFromStatus,
  serviceMessage,
  type ResponsePolicy,
  type ServiceResponse,
} from '../../src/docs-api/response-errors';
import { parseJobAnswer } from '../../src/docs-api/schemas';

const KEY = 'mint_s3cr3tS3cr3t';
const redact = (text: string) => text.replaceAll(KEY, '[redacted]');
const init = (safeToRetry: boolean): DocsApiErrorInit => ({ operation: 'getJob', safeToRetry });

function answer(status: number, text = '', headers: ServiceResponse['headers'] = {}): ServiceResponse {
  return { status, headers, text };
}

function mapped(response: ServiceResponse, policy: Partial<ResponsePolicy> = {}) {
  const warnings: string[] = [];
  const error = errorFromStatus(response, init, {
    redact,
    maxRetryAfterMs: 3_600_000,
    onWarning: (warning) => warnings.push(warning),
    ...policy,
  });
  return { error, warnings };
}

describe('errorFromStatus: one error class per status family', () => {
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
      const { error } = mapped(answer(status));
      assert.deepEqual(
        { status, name: error.name, retryable: error.retryable, safeToRetry: error.safeToRetry },
        { status, name: type, retryable, safeToRetry },
      );
    }
  });

  test("the service's message is in the error, the key is not", () => {
    const body = JSON.stringify({ error: `bad key ${KEY}`, details: [{ message: 'prefix unknown' }] });
    const { error } = mapped(answer(401, body));
    assert.match(error.message, /not authorized: bad key \[redacted\] \(prefix unknown\)/);
    assert.ok(!error.message.includes(KEY));
    assert.match(mapped(answer(403)).error.message, /forbidden: .*read-only key.*HTTP 403/);
  });

  test('Retry-After of a 429 or 5xx is kept; a longer one than allowed is clamped, with a warning', () => {
    const { error, warnings } = mapped(answer(429, '', { 'retry-after': '7' }));
    assert.equal(error.retryAfterMs, 7000);
    assert.deepEqual(warnings, []);
    const clamped = mapped(answer(503, '', { 'retry-after': '7200' }), { maxRetryAfterMs: 60_000 });
    assert.equal(clamped.error.retryAfterMs, 60_000);
    assert.deepEqual(clamped.warnings, ['Retry-After asked for 7200s, clamped to 60s']);
    assert.match(clamped.error.message, /clamped to 60s/);
  });

  test('a redirect names where it points, redacted, and is not followed', () => {
    const { error } = mapped(answer(301, '', { location: `https://elsewhere.example/?k=${KEY}` }));
    assert.ok(error instanceof RedirectError);
    assert.equal(error.location, 'https://elsewhere.example/?k=[redacted]');
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

describe('answerOf: a 2xx answer, or MalformedResponseError', () => {
  const job = { id: 'job_1', status: 'active', prLink: null };
  const json = { 'content-type': 'application/json' };

  test('a documented answer is parsed; JSON without its content type is used, with a warning', () => {
    const warnings: string[] = [];
    const options = { namesJob: true, onWarning: (w: string) => warnings.push(w) };
    assert.equal(
      answerOf(answer(200, JSON.stringify(job), json), parseJobAnswer, init, options).value.id,
      'job_1',
    );
    assert.deepEqual(warnings, []);
    assert.equal(answerOf(answer(200, JSON.stringify(job)), parseJobAnswer, init, options).value.id, 'job_1');
    assert.deepEqual(warnings, ['response content-type "none": the body was read as JSON']);
  });

  test('not JSON, or a field that breaks the schema, names what is wrong and keeps a named job', () => {
    const malformed = (response: ServiceResponse, namesJob = true) => {
      try {
        answerOf(response, parseJobAnswer, init, { namesJob });
      } catch (error) {
        assert.ok(error instanceof MalformedResponseError);
        assert.equal(error.safeToRetry, false);
        return error;
      }
      assert.fail('expected MalformedResponseError');
    };
    assert.equal(malformed(answer(200, '<html>', { 'content-type': 'text/html' })).field, 'content-type');
    assert.equal(malformed(answer(200, '{', json)).field, 'body');
    const noStatus = malformed(answer(201, JSON.stringify({ id: 42, prLink: null }), json));
    assert.equal(noStatus.field, 'status');
    assert.equal(noStatus.jobId, '42', 'a numeric id is kept as its digits');
    assert.match(noStatus.message, /the answer names job 42/);
    assert.equal(malformed(answer(200, JSON.stringify({ id: 'x' }), json), false).jobId, undefined);
  });
});
