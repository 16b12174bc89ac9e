// Runs the TypeScript caller: a worker of the caller's namespace hosts caller-workflows.ts, then one workflow runs
// an agent job through the Nexus endpoint `docs-agent` and prints its pull-request link. The endpoint must exist
// (`docs-agent setup`, or `temporal operator nexus endpoint create`), and a docs-agent worker must be running.
// In this checkout, build the package first (`npm run build -w packages/client`); a caller installs it instead.
//   TEMPORAL_ADDRESS=localhost:7233 npx tsx examples/nexus-callers/run-caller.ts <callerNamespace> <projectId> <prompt>
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { documentFeature } from './caller-workflows';

async function main(): Promise<void> {
  const [namespace = 'callers', projectId = 'acme', prompt = 'Document the Nexus service'] =
    process.argv.slice(2);
  const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
  const taskQueue = 'docs-agent-callers';
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    namespace,
    taskQueue,
    workflowsPath: require.resolve('./caller-workflows'),
  });
  const client = new Client({ connection: await Connection.connect({ address }), namespace });
  const prLink = await worker.runUntil(
    client.workflow.execute(documentFeature, {
      taskQueue,
      workflowId: `document-feature/${randomUUID()}`,
      args: [{ projectId, prompt }],
    }),
  );
  console.log(JSON.stringify({ prLink }));
  await client.connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
