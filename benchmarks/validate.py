"""Benchmark: decode and validate realistic AAEP events, against jsonschema.

Builds a deterministic corpus of banking-style sessions (the shape of §4.6: start,
state changes, tool calls, a confirmation, streamed output, completion; some sessions
also ask a clarification, hand off, fail or are cancelled: all twelve types), serialises
every event as one JSON line, then measures in the same run:

- ``decode_frame`` on every line (UTF-8 check, size limit, JSON parsing with the §3.8
  hooks, the nine steps of §3.9, per-type rules), and
- ``json.loads`` plus ``jsonschema`` (Draft 2020-12, official schemas, envelope resolved
  through ``referencing``) on the same lines.

Prints one JSON line. Usage: python benchmarks/validate.py [--events N] [--schema-events M]
(``--schema-events`` caps the jsonschema pass, which is much slower; its rate is per event).
Each side runs ``--repeat`` passes and the fastest counts (as ``timeit`` does).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from announcer.protocol import decode_frame

SCHEMAS = Path(os.environ.get("AAEP_SCHEMAS", "/work/shared/aaep/schemas"))
CONTEXT = "https://aaep-protocol.org/context/v1"


def _session(rng: random.Random, number: int) -> list[dict[str, Any]]:
    session_id = f"sess_{rng.getrandbits(64):016x}"
    producer = {
        "agent_id": "banking-assistant",
        "agent_version": "3.0.1",
        "agent_name": "Banking Assistant",
    }
    clock = [1_780_000_000.0 + number * 60]
    events: list[dict[str, Any]] = []

    def emit(type_: str, urgency: str, **payload: Any) -> None:
        clock[0] += rng.uniform(0.05, 1.5)
        whole, frac = divmod(clock[0], 1)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        event = {
            "@context": CONTEXT,
            "type": f"aaep:{type_}",
            "event_id": f"evt_{rng.getrandbits(128):032x}",
            "session_id": session_id,
            "sequence_number": len(events),
            "timestamp": f"{stamp}.{int(frac * 1000):03d}Z",
            "producer": producer,
            "urgency": urgency,
        }
        if rng.random() < 0.5:
            event["localization_hints"] = {"primary_language": "en-US", "text_direction": "ltr"}
        event.update(payload)
        events.append(event)

    amount = rng.randint(10, 5000)
    emit(
        "agent.session.started",
        "normal",
        summary_terse="Started.",
        summary_normal="Banking Assistant is checking your accounts.",
        request_text=f"Move ${amount} to savings.",
        tools_available=["fetch_balance", "transfer_funds"],
    )
    emit(
        "agent.state.changed",
        "background",
        from_state="idle",
        to_state="thinking",
        summary_normal="Thinking about your request.",
    )
    emit(
        "agent.tool.invoked",
        "normal",
        tool="fetch_balance",
        tool_call_id="call_1a2b",
        summary_normal="Checking your balance.",
        risk_level="low",
        irreversible=False,
    )
    emit(
        "agent.tool.completed",
        "normal",
        tool="fetch_balance",
        tool_call_id="call_1a2b",
        status="success",
        duration_ms=rng.randint(50, 3000),
        summary_normal=f"Balance is ${rng.randint(100, 90000)}.",
    )
    emit(
        "agent.progress.updated",
        "background",
        progress={"percent": 50, "step": 2, "total_steps": 4},
        summary_terse="Half way.",
    )
    if number % 5 == 0:
        emit(
            "agent.awaiting.clarification",
            "critical",
            question="Which account should receive the money?",
            reply_token=f"rpl_{rng.getrandbits(64):016x}",
            timeout_seconds=120,
            accepted_response_kinds=["multiple_choice"],
            choices=[
                {"value": "savings", "label": "Savings"},
                {"value": "brokerage", "label": "Brokerage"},
            ],
            summary_normal="Which account should receive the money?",
        )
    emit(
        "agent.awaiting.confirmation",
        "critical",
        action=f"Transfer ${amount} from checking to savings.",
        consequence="Funds move immediately.",
        reply_token=f"rpl_{rng.getrandbits(64):016x}",
        timeout_seconds=300,
        default_decision="reject",
        risk_level="high",
        irreversible=True,
        summary_normal=f"Confirm transfer of ${amount}?",
    )
    emit(
        "agent.tool.invoked",
        "normal",
        tool="transfer_funds",
        tool_call_id="call_3c4d",
        summary_normal=f"Transferring ${amount}.",
        risk_level="high",
        irreversible=True,
    )
    emit(
        "agent.tool.completed",
        "normal",
        tool="transfer_funds",
        tool_call_id="call_3c4d",
        status="success",
        summary_normal="Transfer done.",
    )
    words = [
        "Your",
        "transfer",
        "of",
        f"${amount}",
        "is",
        "complete.",
        "The",
        "new",
        "balance",
        "is",
        "available",
        "now.",
    ]
    position = 0
    for index in range(0, len(words), 3):
        chunk = " ".join(words[index : index + 3]) + " "
        last = index + 3 >= len(words)
        emit(
            "agent.output.streaming",
            "normal",
            chunk=chunk,
            position=position,
            complete=last,
            coalesce_hint="completion" if last else "word",
            output_id="out_1",
        )
        position += len(chunk)
    if number % 13 == 0:
        emit(
            "agent.handoff.requested",
            "critical",
            reason="The transfer limit needs a human banker's approval.",
            target_kind="human",
            urgency_for_handoff="medium",
            summary_normal="Handing you to a banker.",
        )
    if number % 7 == 0:
        emit(
            "agent.session.errored",
            "critical",
            error_category="transient",
            error_code="TOOL_TIMEOUT",
            summary_normal="The bank did not answer in time. Please try again.",
            recoverable=True,
        )
    elif number % 11 == 0:
        emit(
            "agent.session.cancelled",
            "normal",
            cancelled_by="user",
            cancellation_reason="user_pressed_escape",
            summary_normal="Cancelled at your request.",
        )
    else:
        emit(
            "agent.session.completed",
            "normal",
            summary_normal="All done.",
            duration_ms=rng.randint(1000, 60000),
            tool_invocations_count=2,
        )
    return events


def corpus(count: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    lines: list[bytes] = []
    number = 0
    while len(lines) < count:
        lines.extend(json.dumps(e).encode() for e in _session(rng, number))
        number += 1
    return lines[:count]


def schema_validators() -> dict[str, Any]:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    envelope = json.loads((SCHEMAS / "envelope.schema.json").read_text())
    registry = Registry().with_resource(envelope["$id"], Resource.from_contents(envelope))
    validators = {}
    for path in sorted((SCHEMAS / "core").glob("*.schema.json")):
        schema = json.loads(path.read_text())
        validators[schema["properties"]["type"]["const"]] = Draft202012Validator(
            schema, registry=registry
        )
    return validators


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--schema-events", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="passes; the best one counts")
    args = parser.parse_args()
    lines = corpus(args.events)
    byte_count = sum(len(line) for line in lines)

    # Warm up both paths (imports, pydantic schema build, regex compilation), then keep
    # the best of a few passes: other processes on a shared machine only ever slow us.
    for line in lines[:200]:
        decode_frame(line)
    gc.collect()
    gc.freeze()  # as `announcer listen` does after start-up
    ours = ours_cpu = math.inf
    for _ in range(args.repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        valid = 0
        for line in lines:
            if decode_frame(line).ok:
                valid += 1
        ours = min(ours, time.perf_counter() - started)
        ours_cpu = min(ours_cpu, time.process_time() - started_cpu)
        if valid != len(lines):
            print(json.dumps({"error": f"{len(lines) - valid} corpus events were invalid"}))
            return 1

    validators = schema_validators()
    sample = lines[: args.schema_events]
    for line in sample[:50]:
        data = json.loads(line)
        validators[data["type"]].is_valid(data)
    theirs = theirs_cpu = math.inf
    for _ in range(args.repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        schema_valid = 0
        for line in sample:
            data = json.loads(line)
            if validators[data["type"]].is_valid(data):
                schema_valid += 1
        theirs = min(theirs, time.perf_counter() - started)
        theirs_cpu = min(theirs_cpu, time.process_time() - started_cpu)

    ours_rate = len(lines) / ours
    theirs_rate = len(sample) / theirs
    print(
        json.dumps(
            {
                "events_per_s": round(ours_rate),
                "jsonschema_events_per_s": round(theirs_rate),
                "ratio": round(ours_rate / theirs_rate, 1),
                "events": len(lines),
                "jsonschema_events": len(sample),
                "jsonschema_valid": schema_valid,
                "passes": args.repeat,
                # CPU-time rates: what the work costs when other jobs share the machine.
                "events_per_cpu_s": round(len(lines) / ours_cpu),
                "jsonschema_events_per_cpu_s": round(len(sample) / theirs_cpu),
                "load_average_1min": round(os.getloadavg()[0], 2),
                "mean_event_bytes": round(byte_count / len(lines)),
                "mb_per_s": round(byte_count / ours / 1e6, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
