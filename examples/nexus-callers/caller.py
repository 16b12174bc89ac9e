"""A Python caller of the Nexus service `docs-agent` (official Temporal Python SDK).

A workflow of another team, in its own namespace, runs an agent job through the endpoint and returns the
pull-request link. Run it:

    python3 caller.py --address localhost:7233 --namespace callers --project my-project --prompt "Document X"

It starts a worker for its own workflow on a task queue of the caller's namespace, runs the workflow once, prints
{"prLink": ..., "workflowId": ...} as JSON and exits. The endpoint (`docs-agent` by default) must route to the
docs-agent worker's namespace and task queue: see the README, "Calling the worker through Nexus".
"""

import argparse
import asyncio
import json
import os
import sys
import uuid
from datetime import timedelta
from typing import Any, Optional

from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

SERVICE = "docs-agent"


@workflow.defn
class DocumentFeature:
    @workflow.run
    async def run(self, endpoint: str, job: dict[str, Any]) -> Optional[str]:
        docs_agent = workflow.create_nexus_client(service=SERVICE, endpoint=endpoint)
        # The operation's input and result are those of the workflow `agentJob` (see the README's contract).
        result = await docs_agent.execute_operation(
            "agentJob", job, output_type=dict, schedule_to_close_timeout=timedelta(days=1)
        )
        return result["prLink"]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", default="localhost:7233")
    parser.add_argument("--namespace", default="callers")
    parser.add_argument("--endpoint", default="docs-agent")
    parser.add_argument("--project", required=True)
    parser.add_argument("--prompt", required=True)
    args = parser.parse_args()

    client = await Client.connect(args.address, namespace=args.namespace)
    task_queue = f"python-callers-{uuid.uuid4()}"
    workflow_id = f"document-feature-{uuid.uuid4()}"
    async with Worker(client, task_queue=task_queue, workflows=[DocumentFeature]):
        pr_link = await client.execute_workflow(
            DocumentFeature.run,
            args=[args.endpoint, {"projectId": args.project, "prompt": args.prompt}],
            id=workflow_id,
            task_queue=task_queue,
        )
    print(json.dumps({"prLink": pr_link, "workflowId": workflow_id}))


if __name__ == "__main__":
    asyncio.run(main())
    # Done: leave without the interpreter's shutdown, which the SDK's native runtime threads have been seen to
    # abort after the work was done ("Fatal Python error: PyGILState_Release", exit code 134).
    sys.stdout.flush()
    os._exit(0)
