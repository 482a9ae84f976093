"""The quick way in (jiter plus the event's model) must decide exactly as the careful way.

``decode_frame`` first tries :func:`announcer.protocol.decode._quick_event`; whatever it
accepts must be what the careful decoder (stdlib JSON with §3.8 hooks, then the nine
steps of §3.9) accepts, with the same event, diagnostics and raw object.
"""

from __future__ import annotations

import json
import math
from typing import Any

import jiter
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from announcer.protocol import decode
from announcer.protocol.decode import DecodeResult, decode_frame
from tests.shared_data import SHARED
from tests.support.examples import examples

FIXTURES = SHARED / "aaep" / "fixtures"


def _fixture_texts() -> list[str]:
    texts = [path.read_text(encoding="utf-8") for path in sorted(FIXTURES.rglob("*.json"))]
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        texts += [line for line in path.read_text(encoding="utf-8").splitlines() if line]
    return texts


FIXTURE_TEXTS = _fixture_texts()
VALID_EVENTS: list[dict[str, Any]] = [
    json.loads(text) for text in FIXTURE_TEXTS if decode._decode_carefully(text).kind == "event"
]


def _same(left: Any, right: Any) -> bool:
    """Equal with the same types all the way down; floats compared bit for bit."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        return left.hex() == right.hex() or (math.isnan(left) and math.isnan(right))
    if isinstance(left, dict):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same, left, right))
    return bool(left == right)


def _assert_decided_alike(text: str) -> DecodeResult:
    careful = decode._decode_carefully(text)
    quick = decode._quick_event(text)
    if quick is not None:
        assert quick.kind == careful.kind, (text, quick, careful)
        assert quick.message == careful.message, text
        assert quick.diagnostics == careful.diagnostics, text
        assert _same(quick.raw, careful.raw), text
    overall = decode_frame(text)
    assert (overall.kind, overall.message, overall.diagnostics) == (
        careful.kind,
        careful.message,
        careful.diagnostics,
    ), text
    return overall


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([2**53, 2**53 + 1, -(2**53), -(2**53) - 1, 0, 1, 100])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
# Fields whose numbers and shapes matter most, plus any name at all.
_FIELD_NAMES = st.sampled_from(
    [
        "sequence_number",
        "position",
        "timeout_seconds",
        "duration_ms",
        "tool_invocations_count",
        "eta_ms",
        "progress",
        "urgency",
        "timestamp",
        "extra_context",
        "extensions",
        "summary_normal_yo",
        "producer",
        "complete",
    ]
) | st.text(max_size=10)


@settings(max_examples=examples(600), suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(VALID_EVENTS),
    st.lists(st.tuples(_FIELD_NAMES, json_values), max_size=3),
    st.booleans(),
)
def test_changed_events_are_decided_alike(
    event: dict[str, Any], changes: list[tuple[str, Any]], ascii_only: bool
) -> None:
    changed = dict(event)
    for name, value in changes:
        changed[name] = value
    _assert_decided_alike(json.dumps(changed, ensure_ascii=ascii_only))


@settings(max_examples=examples(200), suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(VALID_EVENTS),
    st.sampled_from(["step", "total_steps", "percent", "description"]),
    json_values,
)
def test_changed_progress_is_decided_alike(event: dict[str, Any], name: str, value: Any) -> None:
    changed = {**event, "type": "aaep:agent.progress.updated", "progress": {name: value}}
    _assert_decided_alike(json.dumps(changed))


# Raw texts a hostile producer may send, spliced into a valid event.
_SPLICES = [
    '"sequence_number":1,"sequence_number":2',
    '"producer":{"agent_id":"a","agent_id":"b"}',
    '"sequence_number":NaN',
    '"sequence_number":Infinity',
    '"progress":{"percent":1e400}',
    '"progress":{"percent":-1e400}',
    '"progress":{"percent":1E+308}',
    '"progress":{"step":9007199254740993}',
    '"sequence_number":9007199254740992',
    '"sequence_number":9007199254740993',
    '"sequence_number":123456789012345678901234567890',
    '"position":-0',
    '"summary_normal":"\\ud800"',
    '"summary_normal":"\\ud83d\\ude00 ok"',
    '"summary_normal":"\\u0000"',
    '"summary_normal":"x\x01"',
    '"summary_normal" : "spaced" ',
    '"sequence_number":01',
    '"sequence_number":1.0',
    '"sequence_number":+1',
    '"complete":tru',
    '"":1,"":2',
    '"summary_normal":"\\x41"',
    '"summary_normal":"\\/"',
]


def _spliced(event: dict[str, Any], piece: str) -> str:
    text = json.dumps(event)
    return text[:-1] + "," + piece + "}"


@pytest.mark.parametrize("piece", _SPLICES)
@pytest.mark.parametrize("event", VALID_EVENTS[:4], ids=lambda e: e["type"])
def test_hostile_splices_are_decided_alike(event: dict[str, Any], piece: str) -> None:
    _assert_decided_alike(_spliced(event, piece))


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1} x',
        "[" * 5000 + "]" * 5000,
        "{" * 20 + "}" * 20,
        "12345678901234567890",
        "[1,2]",
        '"text"',
        "\t" + json.dumps(VALID_EVENTS[0]) + "\r\n",
        "\x0c" + json.dumps(VALID_EVENTS[0]),
    ],
)
def test_odd_texts_are_decided_alike(text: str) -> None:
    _assert_decided_alike(text)


def test_every_conformance_fixture_is_decided_alike() -> None:
    assert len(FIXTURE_TEXTS) > 10, "AAEP conformance fixtures not found"
    for text in FIXTURE_TEXTS:
        _assert_decided_alike(text)


def test_the_quick_way_really_takes_the_common_case() -> None:
    """Guard the premise: clean events do not fall back to the careful decoder."""
    quick = [decode._quick_event(json.dumps(event)) for event in VALID_EVENTS]
    assert len(VALID_EVENTS) >= 5 and all(result is not None for result in quick)


def test_a_number_beyond_2_53_is_explained_as_the_careful_decoder_does() -> None:
    text = _spliced(VALID_EVENTS[0], '"sequence_number":9007199254740993').replace(
        '"sequence_number": 0, ', ""
    )
    jiter_value = jiter.from_json(text.encode())["sequence_number"]
    assert jiter_value == 2**53 + 1  # jiter alone would let it through
    result = _assert_decided_alike(text)
    assert result.kind == "invalid"
    assert [d.code for d in result.diagnostics] == ["number.range"]


def test_duplicate_key_still_explained_after_quick_refusal() -> None:
    result = decode_frame('{"type":"aaep:agent.tool.invoked","type":"x"}')
    assert result.kind == "invalid"
    assert result.diagnostics[0].code == "json.duplicate_key"
    assert '"type" appears twice' in result.diagnostics[0].message
