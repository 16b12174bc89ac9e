"""A foreign caller of the docs-agent worker: the official Temporal Python SDK and nothing of this project.

test/contract/foreign-caller.test.ts runs it once per scenario, e.g.

    python3 foreign_caller.py --address 127.0.0.1:7233 --namespace default --task-queue docs-agent \
        jobs --project p1 --job orders-42-docs-p1 "Document the orders API"

It speaks only the public contract (README, "Calling it from other services"): workflow, signal, update, query
and operation names, their JSON input and output, ApplicationError types, search attributes. It prints what it
observed as JSON, one object a line; the last line is the scenario's outcome. Failures are observations, not crashes: every call's
outcome is recorded as {"ok": true, "value": ...} or {"ok": false, "error": {...}}, and the test asserts on them.
A scenario gives up after --budget seconds (its waits then fail with TimeoutError, and the runs it started and
still waits for are terminated), so that it always reports before the test's own timeout.
"""

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from datetime import timedelta
from typing import Any, Awaitable, Callable, Optional

from temporalio import workflow
from temporalio.client import Client, WorkflowHandle
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

# Fast polling, within the contract's rules (durations as Temporal duration strings).
POLLING = {"initialInterval": "100ms", "maxInterval": "500ms", "backoffCoefficient": 2, "deadline": "2m"}

DEADLINE = 0.0  # time.monotonic() at which the scenario gives up; set by main()


def remaining(at_most: float = float("inf")) -> float:
    return max(0.1, min(at_most, DEADLINE - time.monotonic()))


def now_ms() -> int:
    return int(time.time() * 1000)


def emit(record: dict[str, Any]) -> None:
    print(json.dumps(record), flush=True)


def describe_error(error: BaseException) -> dict[str, Any]:
    """The error as the SDK raised it, and the first ApplicationError of its causes."""
    described: dict[str, Any] = {"class": type(error).__name__, "message": str(error)}
    cause: Optional[BaseException] = error
    while cause is not None:
        if isinstance(cause, ApplicationError):
            described["cause"] = {
                "class": "ApplicationError",
                "type": cause.type,
                "message": cause.message,
                "nonRetryable": cause.non_retryable,
                "details": list(cause.details),
            }
            break
        # The SDK's errors (WorkflowFailureError, WorkflowUpdateFailedError, FailureError) name their cause.
        cause = getattr(cause, "cause", None) or cause.__cause__
    return described


SKIPPED = {"ok": False, "error": {"class": "Skipped", "message": "not started: an earlier step failed"}}


async def outcome(call: Awaitable[Any]) -> dict[str, Any]:
    try:
        return {"ok": True, "value": await call}
    except Exception as error:  # noqa: BLE001 - every failure is an observation
        return {"ok": False, "error": describe_error(error)}


async def eventually(probe: Callable[[], Awaitable[Any]], timeout: float) -> Any:
    """Calls probe until it returns something truthy, or the time is up; returns its last value."""
    deadline = time.monotonic() + remaining(timeout)
    while True:
        value = await probe()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.2)


async def result_of(handle: WorkflowHandle) -> dict[str, Any]:
    """The run's result or failure; a run still going when the budget is spent is terminated."""
    observed = await outcome(asyncio.wait_for(handle.result(), remaining()))
    if not observed["ok"] and observed["error"]["class"] == "TimeoutError":
        await outcome(handle.terminate(reason="foreign_caller.py: gave up waiting"))
    return observed


async def start_job(
    client: Client, args: argparse.Namespace, workflow_id: str, project: str, prompt: str
) -> WorkflowHandle:
    return await client.start_workflow(
        "agentJob",
        {"projectId": project, "prompt": prompt, "polling": POLLING},
        id=workflow_id,
        task_queue=args.task_queue,
        execution_timeout=timedelta(minutes=5),
    )


async def run_job(
    client: Client,
    args: argparse.Namespace,
    workflow_id: str,
    project: str,
    prompt: str,
    follow_ups: Optional[list[dict[str, str]]] = None,
) -> dict[str, Any]:
    """Starts agentJob under the caller's id (then signals `follow_ups`) and waits for its result; the run id and
    the times around it."""
    run: dict[str, Any] = {"workflowId": workflow_id, "startedAt": now_ms()}
    try:
        handle = await start_job(client, args, workflow_id, project, prompt)
        for follow_up in follow_ups or []:
            await handle.signal("followUp", follow_up)
    except Exception as error:  # noqa: BLE001
        return {**run, "ok": False, "error": describe_error(error), "endedAt": now_ms()}
    observed = await result_of(handle)
    return {**run, "runId": handle.result_run_id, "endedAt": now_ms(), **observed}


async def list_ids(client: Client, query: str) -> list[str]:
    return sorted([w.id async for w in client.list_workflows(query)])


# ---- Scenarios ----


async def jobs(client: Client, args: argparse.Namespace) -> dict[str, Any]:
    """Each wave of jobs concurrently, the second once the first has ended; every result."""
    results: list[dict[str, Any]] = []
    for wave in (args.job or [], args.then_job or []):
        if any(not r["ok"] for r in results):
            results += [{"workflowId": workflow_id, **SKIPPED} for workflow_id, _ in wave]
            continue
        results += await asyncio.gather(
            *(run_job(client, args, workflow_id, args.project, prompt) for workflow_id, prompt in wave)
        )
    return {"jobs": results}


async def follow_ups(client: Client, args: argparse.Namespace) -> dict[str, Any]:
    """A signal, updates (new, duplicates, empty prompt), getState; then the result, once the test ends the job."""
    handle = await start_job(client, args, args.id, args.project, "Document the billing API")

    async def send(prompt: str, message_id: str) -> dict[str, Any]:
        update = {"prompt": prompt, "messageId": message_id}
        call = handle.execute_update("sendFollowUp", update, result_type=dict)
        return await outcome(asyncio.wait_for(call, remaining(90)))

    signal = await outcome(handle.signal("followUp", {"prompt": "Also the FAQ", "messageId": "faq"}))
    update = await send("And the glossary", "glossary")
    duplicate = await send("The glossary again", "glossary")
    duplicate_of_signal = await send("The FAQ again", "faq")
    signal_again = {"prompt": "The FAQ, signalled again", "messageId": "faq"}
    duplicate_signal = await outcome(handle.signal("followUp", signal_again))
    empty = await send("", "changelog")
    # An id refused (here: invalid) may be sent again.
    refused_id_again = await send("Then the changelog", "changelog")

    async def delivered() -> Any:
        state = await handle.query("getState", result_type=dict)
        follow_ups = state.get("followUps", [])
        settled = len(follow_ups) >= 3 and all(f.get("status") != "pending" for f in follow_ups)
        return state if settled and state.get("jobId") else None

    state = await outcome(eventually(delivered, 30))
    if state["ok"] and state["value"] is None:
        state = await outcome(handle.query("getState", result_type=dict))
    emit(
        {
            "phase": "steered",
            "workflowId": args.id,
            "signal": signal,
            "update": update,
            "duplicate": duplicate,
            "duplicateOfSignal": duplicate_of_signal,
            "duplicateSignal": duplicate_signal,
            "empty": empty,
            "refusedIdAgain": refused_id_again,
            "state": state,
        }
    )
    result = await result_of(handle)
    final_state = await outcome(handle.query("getState", result_type=dict))
    return {"phase": "done", "result": result, "finalState": final_state}


async def reuse(client: Client, args: argparse.Namespace, project: str, workflow_id: str) -> dict[str, Any]:
    """One id, three runs: a job with a follow-up; another prompt under the same id; the first prompt again, with
    the same follow-up (sent before: not again) and a new one."""
    examples = {"prompt": "Add examples", "messageId": "examples"}
    first = await run_job(client, args, workflow_id, project, "Document the search API", [examples])
    runs: dict[str, Any] = {"first": first}
    if runs["first"]["ok"]:
        runs["otherPrompt"] = await run_job(client, args, workflow_id, project, "Rewrite the whole site in French")
        more = {"prompt": "And the errors", "messageId": "errors"}
        runs["samePrompt"] = await run_job(
            client, args, workflow_id, project, "Document the search API", [examples, more]
        )
    else:
        runs["otherPrompt"] = runs["samePrompt"] = {"workflowId": workflow_id, **SKIPPED}
    return {"project": project, "workflowId": workflow_id, **runs}


async def failures(client: Client, args: argparse.Namespace) -> dict[str, Any]:
    invalid, failed, *reused = await asyncio.gather(
        run_job(client, args, f"orders-invalid-{args.invalid_project}", args.invalid_project, ""),
        run_job(client, args, f"orders-failing-{args.failed_project}", args.failed_project, "Document the moon"),
        *(reuse(client, args, project, workflow_id) for project, workflow_id in args.reuse),
    )
    return {"invalid": invalid, "failed": failed, "reuse": reused}


async def export(client: Client, args: argparse.Namespace) -> dict[str, Any]:
    """visitorsExport under the caller's id: getProgress while it runs and after, its result, visibility."""
    handle = await client.start_workflow(
        "visitorsExport",
        {
            "projectId": args.project,
            "dateFrom": args.date_from,
            "dateTo": args.date_to,
            "pageSize": args.page_size,
            "concurrency": 1,
            "format": "ndjson",
        },
        id=args.id,
        task_queue=args.task_queue,
        execution_timeout=timedelta(minutes=5),
    )
    result_task = asyncio.ensure_future(result_of(handle))
    progress: list[Any] = []
    while not result_task.done():
        observed = await outcome(handle.query("getProgress", result_type=dict))
        progress.append(observed["value"] if observed["ok"] else observed)
        await asyncio.sleep(0.1)
    result = await result_task
    after = await outcome(handle.query("getProgress", result_type=dict))
    query = f"WorkflowType = 'visitorsExport' AND DocsProjectId = '{args.project}'"
    listed = await eventually(lambda: list_ids(client, query), 30)
    return {"result": result, "progress": progress, "progressAfter": after, "listed": listed}


async def visibility(client: Client, args: argparse.Namespace) -> dict[str, Any]:
    """Jobs found by each search attribute: while active (the jobs stay active until the test ends them), then
    once completed."""
    project = args.project
    handles = [await start_job(client, args, wid, project, f"Document {wid}") for wid in args.id]
    ids = sorted(args.id)

    async def listing(query: str, expected: list[str]) -> dict[str, Any]:
        async def found() -> Optional[list[str]]:
            listed = await list_ids(client, query)
            return listed if listed == expected else None

        listed = await eventually(found, 30)
        return {"query": query, "found": listed if listed is not None else await list_ids(client, query)}

    active = await listing(f"AgentJobStatus = 'active' AND DocsProjectId = '{project}'", ids)
    states = [await outcome(h.query("getState", result_type=dict)) for h in handles]
    job_ids = [state["value"]["jobId"] if state["ok"] else None for state in states]
    emit({"phase": "active", "active": active, "jobIds": job_ids})  # the test now ends the jobs at the service
    results = [await result_of(h) for h in handles]
    by_project = await listing(f"DocsProjectId = '{project}' AND WorkflowType = 'agentJob'", ids)
    completed = await listing(f"AgentJobStatus = 'completed' AND DocsProjectId = '{project}'", ids)
    by_job = [
        await listing(f"AgentJobId = '{result['value']['jobId']}'", [wid]) if result["ok"] else SKIPPED
        for wid, result in zip(args.id, results)
    ]
    return {
        "results": dict(zip(args.id, results)),
        "active": active,
        "byProject": by_project,
        "completed": completed,
        "byJobId": by_job,
    }


@workflow.defn
class ForeignNexusCaller:
    """A workflow of another team, in its own namespace: both operations of the Nexus service `docs-agent`."""

    @workflow.run
    async def run(self, endpoint: str, job: dict[str, Any], export: dict[str, Any]) -> dict[str, Any]:
        docs_agent = workflow.create_nexus_client(service="docs-agent", endpoint=endpoint)

        async def call(operation: str, payload: dict[str, Any]) -> dict[str, Any]:
            try:
                value = await docs_agent.execute_operation(
                    operation, payload, output_type=dict, schedule_to_close_timeout=timedelta(minutes=2)
                )
                return {"ok": True, "value": value}
            except Exception as error:  # noqa: BLE001 - reported to the test, which asserts on it
                return {"ok": False, "error": describe_error(error)}

        agent_job, visitors_export = await asyncio.gather(call("agentJob", job), call("visitorsExport", export))
        return {"agentJob": agent_job, "visitorsExport": visitors_export}


async def nexus(client: Client, args: argparse.Namespace) -> dict[str, Any]:
    task_queue = f"foreign-nexus-{uuid.uuid4()}"
    job = {"projectId": args.job_project, "prompt": "Document the Nexus service", "polling": POLLING}
    exported = {"projectId": args.export_project, "dateFrom": args.date_from, "dateTo": args.date_to}
    async with Worker(client, task_queue=task_queue, workflows=[ForeignNexusCaller]):
        handle = await client.start_workflow(
            ForeignNexusCaller.run,
            args=[args.endpoint, job, exported],
            id=f"foreign-nexus-caller-{uuid.uuid4()}",
            task_queue=task_queue,
            execution_timeout=timedelta(minutes=4),
        )
        observed = await result_of(handle)
    return {"caller": observed}


SCENARIOS = {
    "jobs": jobs,
    "follow-ups": follow_ups,
    "failures": failures,
    "export": export,
    "visibility": visibility,
    "nexus": nexus,
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--task-queue", default="docs-agent")
    parser.add_argument("--budget", type=float, default=150.0, help="seconds before the scenario gives up")
    sub = parser.add_subparsers(dest="scenario", required=True)

    p = sub.add_parser("jobs")
    p.add_argument("--project", required=True)
    p.add_argument("--job", nargs=2, action="append", metavar=("ID", "PROMPT"), help="first wave, concurrently")
    p.add_argument("--then-job", nargs=2, action="append", metavar=("ID", "PROMPT"), help="after the first wave")

    p = sub.add_parser("follow-ups")
    p.add_argument("--project", required=True)
    p.add_argument("--id", required=True)

    p = sub.add_parser("failures")
    p.add_argument("--invalid-project", required=True)
    p.add_argument("--failed-project", required=True)
    p.add_argument("--reuse", nargs=2, action="append", default=[], metavar=("PROJECT", "ID"))

    p = sub.add_parser("export")
    p.add_argument("--project", required=True)
    p.add_argument("--id", required=True)
    p.add_argument("--date-from", required=True)
    p.add_argument("--date-to", required=True)
    p.add_argument("--page-size", type=int, default=50)

    p = sub.add_parser("visibility")
    p.add_argument("--project", required=True)
    p.add_argument("--id", action="append", required=True)

    p = sub.add_parser("nexus")
    p.add_argument("--endpoint", default="docs-agent")
    p.add_argument("--job-project", required=True)
    p.add_argument("--export-project", required=True)
    p.add_argument("--date-from", required=True)
    p.add_argument("--date-to", required=True)
    return parser.parse_args()


async def main() -> None:
    global DEADLINE
    args = parse_args()
    DEADLINE = time.monotonic() + args.budget
    client = await Client.connect(args.address, namespace=args.namespace)
    emit(await SCENARIOS[args.scenario](client, args))


if __name__ == "__main__":
    asyncio.run(main())
    # Leave without the interpreter's shutdown, which the SDK's native runtime threads have been seen to abort
    # after the work was done (examples/nexus-callers/caller.py).
    sys.stdout.flush()
    os._exit(0)
