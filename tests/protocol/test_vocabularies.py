"""The protocol's vocabularies (urgency, verbosity, risk, decisions, event types, ...) are
declared once, in announcer/protocol, and imported everywhere else (issue 24 item 5).

A module outside the protocol that declares one of them again as a ``Literal`` fails
here; the few places that must spell the words out (a lean module, an order of
preference) are checked to hold exactly the protocol's words.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path
from typing import get_args

import announcer
from announcer.command_analysis import Risk
from announcer.engine.announcement import Urgency
from announcer.engine.settings import UserSettings
from announcer.protocol import events, handshake, replies

PACKAGE = Path(announcer.__file__).resolve().parent


def _string_literals(tree: ast.AST) -> list[tuple[int, frozenset[str]]]:
    """Each ``Literal["a", "b", ...]`` of two words or more: its line and its words."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript):
            continue
        name = node.value
        if not (isinstance(name, ast.Name) and name.id == "Literal") and not (
            isinstance(name, ast.Attribute) and name.attr == "Literal"
        ):
            continue
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        words = [i.value for i in items if isinstance(i, ast.Constant)]
        if len(words) >= 2 and all(isinstance(w, str) for w in words):
            found.append((node.lineno, frozenset(words)))
    return found


def _protocol_vocabularies() -> set[frozenset[str]]:
    vocabularies = set()
    for path in (PACKAGE / "protocol").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        vocabularies.update(words for _line, words in _string_literals(tree))
    return vocabularies


def test_no_module_outside_the_protocol_declares_a_protocol_vocabulary_again() -> None:
    vocabularies = _protocol_vocabularies()
    assert frozenset(get_args(events.Urgency)) in vocabularies  # the scan finds them
    again = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(PACKAGE / "protocol"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, words in _string_literals(tree):
            if words in vocabularies:
                again.append(f"{path.relative_to(PACKAGE)}:{line} {sorted(words)}")
    assert not again, "import it from announcer.protocol: " + ", ".join(again)


def _word_collections(tree: ast.AST) -> list[tuple[int, frozenset[str]]]:
    """Each tuple, list or set written out of two words or more: its line and its words."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 2:
            words = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(words) == len(node.elts) and all(isinstance(w, str) for w in words):
                found.append((node.lineno, frozenset(words)))
    return found


# Where a vocabulary's words are spelled out on purpose, and why (checked below).
SPELLED_OUT = {
    # ``announcer hook`` loads the flags and never pydantic
    ("config/flags.py", frozenset(get_args(events.Verbosity))),
    ("config/flags.py", frozenset(get_args(handshake.CognitiveLoad))),
    # which summary stands in for a missing one, per verbosity: an order of preference
    ("engine/policy.py", frozenset(get_args(events.Verbosity))),
    # the order a question offers its response kinds in, most guided first
    ("ui/tui/prompt_view.py", frozenset(get_args(events.ResponseKind))),
    # an agent that offers "always" for both answers (a set compared, not a vocabulary)
    ("ui/tui/prompt_view.py", frozenset(get_args(events.Decision))),
}


def test_no_module_outside_the_protocol_spells_out_a_protocol_vocabulary() -> None:
    vocabularies = _protocol_vocabularies()
    again = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("protocol/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, words in _word_collections(tree):
            if words in vocabularies and (relative, words) not in SPELLED_OUT:
                again.append(f"{relative}:{line} {sorted(words)}")
    assert not again, "use get_args() of the protocol's Literal: " + ", ".join(again)


def test_the_engines_urgency_is_the_protocols_words_in_the_protocols_order() -> None:
    assert tuple(u.value for u in Urgency) == get_args(events.Urgency)
    ranked = sorted(Urgency, key=lambda u: u.rank)
    assert tuple(u.value for u in ranked) == get_args(events.Urgency)


def test_settings_and_the_command_analysis_use_the_protocols_vocabularies() -> None:
    fields = UserSettings.model_fields
    assert fields["verbosity"].annotation == events.Verbosity
    assert fields["cognitive_load"].annotation == handshake.CognitiveLoad
    assert Risk == events.RiskLevel
    assert get_args(replies.ConfirmationReply.model_fields["decision"].annotation) == get_args(
        events.Decision
    )


def test_the_settings_flags_offer_exactly_the_protocols_words() -> None:
    """config/flags.py spells them out: ``announcer hook`` loads it and never pydantic."""
    from announcer.config.flags import add_settings_flags

    parser = argparse.ArgumentParser()
    add_settings_flags(parser)
    choices = {action.dest: action.choices for action in parser._actions}
    assert tuple(choices["verbosity"]) == get_args(events.Verbosity)
    assert tuple(choices["cognitive_load"]) == get_args(handshake.CognitiveLoad)


def test_each_verbosity_falls_back_through_every_verbosity() -> None:
    from announcer.engine.policy import _LEVEL_ORDER

    words = get_args(events.Verbosity)
    assert set(_LEVEL_ORDER) == set(words)
    for level, order in _LEVEL_ORDER.items():
        assert order[0] == level and sorted(order) == sorted(words)


def test_the_interfaces_word_every_risk_and_offer_every_response_kind() -> None:
    from announcer.ui.tui.prompt_view import RESPONSE_KINDS, RISK_PHRASES
    from announcer.ui.tui.screens import LEVEL_LABELS

    assert set(RISK_PHRASES) == set(get_args(events.RiskLevel))
    # the order a question offers them in, most guided first
    assert sorted(RESPONSE_KINDS) == sorted(get_args(events.ResponseKind))
    levels = set(get_args(events.Verbosity)) | set(get_args(handshake.CognitiveLoad))
    assert set(LEVEL_LABELS) == levels


def test_a_scenario_may_emit_every_core_event_type_and_nothing_else() -> None:
    from announcer.producer.scenario import _EVENT_TYPES

    assert frozenset(events.CORE_EVENT_TYPES) == _EVENT_TYPES
