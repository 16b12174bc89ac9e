import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCampaign } from '../../chaos/campaign';
import { planOperators } from '../../chaos/operator-plan';
import { OPERATORS_QUICK_CAMPAIGN } from '../../chaos/options';

const QUICK = OPERATORS_QUICK_CAMPAIGN.operators ?? assert.fail('the quick operator campaign has operators');

test('operator plan: the same seed gives the same actions, another seed others', () => {
  const plan = planOperators(QUICK);
  assert.deepEqual(planOperators({ ...QUICK }), plan);
  assert.notEqual(planOperators({ ...QUICK, seed: QUICK.seed + 1 }).digest, plan.digest);
  const kinds = new Set(plan.actions.map((action) => action.kind));
  for (const kind of [
    'start',
    'signal',
    'update',
    'resend',
    'cancel',
    'terminate',
    'reset',
    'reset-each',
    'reset-refused',
  ]) {
    assert.ok(kinds.has(kind as never), `the quick plan has no ${kind}`);
  }
});

test('quick operator campaign: nothing created or sent twice, nothing accepted lost, every job ended or waiting', async () => {
  const report = await runCampaign(OPERATORS_QUICK_CAMPAIGN, (line) => console.log(line));
  const operators = report.operators ?? assert.fail('no operator tally');
  console.log(JSON.stringify({ operators, violations: report.verdict.violations }, null, 2));
  // The oracle's counts (created twice, sent twice, accepted never sent, neither ended nor waiting, resets to
  // points not offered, refused yet sent): every one must be 0.
  assert.equal(Object.keys(operators.counts).length, 6);
  assert.deepEqual(
    Object.entries(operators.counts).filter(([, n]) => n !== 0),
    [],
  );
  assert.deepEqual(report.verdict.violations, []);
  assert.deepEqual(report.secrets.leaks, []);
  assert.equal(report.workerKills, QUICK.workerKills);
  assert.equal(report.serverRestarts, QUICK.serverRestarts);
  assert.equal(operators.jobs, QUICK.jobs);
  const resets = Object.entries(operators.resets);
  assert.ok(
    resets.some(([what, n]) => !what.startsWith('not offered') && what.endsWith(': reset') && n > 0),
    'no reset made',
  );
  assert.ok(
    resets.some(([what, n]) => what.startsWith('not offered') && what.endsWith(': refused') && n > 0),
    'no reset refused',
  );
  assert.ok((operators.followUps['accepted: sent'] ?? 0) > 0, 'no follow-up sent');
});
