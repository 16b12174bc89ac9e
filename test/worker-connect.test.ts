import assert from 'node:assert/strict';
import { test } from 'node:test';
import { temporalConnectConfig, TemporalUnreachableError } from '../src/client/connect';
import { connectWorker } from '../src/worker';
import { freePort } from '../dev/ports';

test("a worker that cannot reach Temporal names the address, its variable and what to check, not tonic's error", async () => {
  const address = `127.0.0.1:${await freePort()}`;
  const error = await connectWorker(temporalConnectConfig({}, { TEMPORAL_ADDRESS: address })).then(
    () => assert.fail('connected to nothing'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof TemporalUnreachableError, String(error));
  assert.equal(
    error.message,
    `Temporal at ${address} (TEMPORAL_ADDRESS) is unreachable. Check that the server runs and listens there, ` +
      'that TEMPORAL_ADDRESS names it, and that TEMPORAL_TLS and TEMPORAL_API_KEY match the server ' +
      '(Temporal Cloud needs TLS)',
  );
  assert.doesNotMatch(error.message, /tonic|transport::Error/);

  const unset = temporalConnectConfig({}, {});
  assert.equal(unset.address, 'localhost:7233');
  assert.equal(unset.addressSource, 'the default (TEMPORAL_ADDRESS unset)');
});
