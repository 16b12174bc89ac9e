import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCampaign } from '../../chaos/campaign';
import { QUICK_CAMPAIGN } from '../../chaos/options';

test('quick fault campaign: every workflow ends right, nothing lost or duplicated, the key leaks nowhere', async () => {
  const report = await runCampaign(QUICK_CAMPAIGN, (line) => console.log(line));
  console.log(
    JSON.stringify({ ...report, verdict: { ...report.verdict, failureMessages: undefined } }, null, 2),
  );
  assert.deepEqual(report.verdict.violations, []);
  assert.deepEqual(report.secrets.leaks, []);
  assert.equal(report.workerKills, QUICK_CAMPAIGN.workerKillsAt.length);
  assert.equal(report.serverRestarts, 1);
  const faults = Object.entries(report.service.responsesByStatus)
    .filter(([status]) => !status.startsWith('2'))
    .reduce((sum, [, n]) => sum + n, 0);
  assert.ok(faults >= 20, `the simulator injected only ${faults} faults`);
  assert.equal(report.verdict.exportsWhole, QUICK_CAMPAIGN.exports);
  assert.ok(report.secrets.histories >= report.jobs + report.exports, 'every workflow history scanned');
});
