"""The turn as a whole (issue 33, item 2): what an agent did in one turn, from the events
already seen, said as one digest at the end of a long turn and on request.

Sans-I/O: the engine tells the digests what it handled (a turn starting and ending, a
tool's start and end, an answer, the agent's words); this module keeps one bounded record
per working session and words it in the user's language, shorter at terse verbosity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from announcer.i18n.translate import translator
from announcer.protocol.events import ToolCompleted, ToolInvoked
from announcer.protocol.extensions import ANNOUNCER_EXTENSION

#: tool names (any case) that change files, and that run commands, across the formats
EDIT_TOOLS: Final = frozenset(
    {"edit", "write", "delete", "move", "multiedit", "apply_patch", "file_change", "notebookedit"}
)
COMMAND_TOOLS: Final = frozenset(
    {"execute", "bash", "shell", "command", "exec", "command_execution", "run_shell_command"}
)
#: the most of each kind kept for one turn (the counts stay exact)
KEPT: Final = 20
#: the most turns recorded at once (one per working session)
TURNS_KEPT: Final = 256
#: how many of each kind are named at normal verbosity
NAMED: Final = 5

Key = tuple[str, str]


@dataclass(slots=True)
class TurnRecord:
    """One agent's turn as heard: what changed, what ran, what the user answered."""

    agent: str
    started: float
    changes: list[str] = field(default_factory=list)
    change_count: int = 0
    # (what, failed, (passed, failed) tests when its output had a test summary)
    commands: list[tuple[str, bool, tuple[int, int] | None]] = field(default_factory=list)
    command_count: int = 0
    failed_count: int = 0
    answers: list[str] = field(default_factory=list)
    answer_count: int = 0
    errors: int = 0
    last_words: str = ""
    tools: dict[str, tuple[str, str]] = field(default_factory=dict)  # call -> (kind, label)


def _label(event: ToolInvoked) -> str:
    # the description names the call alone (no "Qwen Code approved: " before it)
    text = event.description or event.summary_terse or event.summary_normal or event.tool
    return " ".join(text.split()).rstrip(" .")[:120]


def _changes(event: ToolCompleted) -> str:
    """What an edit did, line counts and all, when its end says less (``x-announcer``
    ``changes``, from announcer's own mappings)."""
    ours = (event.extensions or {}).get(ANNOUNCER_EXTENSION)
    changes = ours.get("changes") if isinstance(ours, dict) else None
    return changes if isinstance(changes, str) else ""


def _suite_counts(event: ToolCompleted) -> tuple[int, int] | None:
    """How many tests the command passed and failed (``x-announcer`` ``tests``, read from
    its output by announcer's own mappings)."""
    ours = (event.extensions or {}).get(ANNOUNCER_EXTENSION)
    tests = ours.get("tests") if isinstance(ours, dict) else None
    if not isinstance(tests, dict):
        return None
    passed, failed = tests.get("passed", -1), tests.get("failed")
    if type(passed) is not int or type(failed) is not int or passed < -1 or failed < 0:
        return None
    return passed, failed  # passed -1: only the failures were named


def _kind(tool: str) -> str:
    name = tool.casefold()
    if name in EDIT_TOOLS:
        return "edit"
    if name in COMMAND_TOOLS:
        return "command"
    return "other"


def _last_sentence(text: str) -> str:
    words = " ".join(text.split())
    for stop in (". ", "! ", "? "):
        if stop in words.rstrip(".!? "):
            words = words.rstrip(".!? ").rsplit(stop, 1)[-1]
    return words[-300:].strip()


class TurnDigests:
    """The turns being recorded, by (source id, session id), and the last digest said."""

    def __init__(self) -> None:
        self._turns: dict[Key, TurnRecord] = {}
        self.last: TurnRecord | None = None
        # turns the agent said were over while a question of theirs was still open: over
        # once it is answered, unless the agent works again first
        self._end_when_answered: set[Key] = set()

    def started(self, key: Key, agent: str, now: float) -> None:
        self._end_when_answered.discard(key)
        if key in self._turns:
            return
        if len(self._turns) >= TURNS_KEPT:  # sessions gone without an end: the oldest goes
            del self._turns[min(self._turns, key=lambda k: self._turns[k].started)]
        self._turns[key] = TurnRecord(agent, now)

    def recording(self, key: Key) -> bool:
        return key in self._turns

    def _record(self, key: Key) -> TurnRecord | None:
        return self._turns.get(key)

    def tool_invoked(self, key: Key, event: ToolInvoked) -> None:
        record = self._record(key)
        if record is not None and len(record.tools) < 512:
            record.tools[event.tool_call_id or event.event_id] = (_kind(event.tool), _label(event))

    def tool_completed(self, key: Key, event: ToolCompleted) -> None:
        record = self._record(key)
        if record is None:
            return
        kind, label = record.tools.pop(event.tool_call_id or "", (_kind(event.tool), ""))
        failed = event.status != "success"
        if failed:
            record.errors += 1
        if kind == "edit":
            record.change_count += 1
            said = " ".join((_changes(event) or event.summary_normal or label).split())
            said = said.rstrip(" .")
            if said and len(record.changes) < KEPT and not failed:
                record.changes.append(said[:160])
        elif kind == "command":
            record.command_count += 1
            record.failed_count += failed
            if label and len(record.commands) < KEPT:
                record.commands.append((label, failed, _suite_counts(event)))

    def answered(self, key: Key, said: str) -> None:
        record = self._record(key)
        if record is None:
            return
        record.answer_count += 1
        if len(record.answers) < KEPT:
            record.answers.append(said)

    def words(self, key: Key, text: str) -> None:
        record = self._record(key)
        if record is not None and text.strip():
            record.last_words = _last_sentence(text)

    def errored(self, key: Key) -> None:
        record = self._record(key)
        if record is not None:
            record.errors += 1

    def end_when_answered(self, key: Key) -> None:
        self._end_when_answered.add(key)

    def ends_when_answered(self, key: Key) -> bool:
        return key in self._end_when_answered

    def ended(self, key: Key) -> TurnRecord | None:
        """The turn is over: its record (kept as the last one), or None if none was kept."""
        self._end_when_answered.discard(key)
        record = self._turns.pop(key, None)
        if record is not None:
            self.last = record
        return record

    def current(self) -> TurnRecord | None:
        """The turn running now (the newest), else the last one that ended."""
        if self._turns:
            return max(self._turns.values(), key=lambda r: r.started)
        return self.last


def digest_text(record: TurnRecord, language: str, verbosity: str) -> str:
    """One digest, in ``language``: named at normal and detailed verbosity, counts at terse."""
    _ = translator(language).gettext
    parts: list[str] = []
    if verbosity == "terse":
        parts.append(
            _("Files changed: {files}. Commands: {commands}, failed: {failed}.").format(
                files=record.change_count,
                commands=record.command_count,
                failed=record.failed_count,
            )
        )
        if record.answers:
            parts.append(_("Answered: {count}.").format(count=record.answer_count))
        return " ".join([_("{agent}'s turn:").format(agent=record.agent), *parts])
    named = KEPT if verbosity == "detailed" else NAMED
    if record.changes:
        more = record.change_count - min(named, len(record.changes))
        listed = "; ".join(record.changes[:named])
        parts.append(_("Changed: {changes}.").format(changes=listed))
        if more > 0:
            parts.append(_("More changes: {count}.").format(count=more))
    if record.commands:
        ran = [
            _("{command}: {passed} passed, {failed} failed").format(
                command=what, passed=tests[0], failed=tests[1]
            )
            if tests is not None and tests[0] >= 0
            else _("{command}: {failed} failed").format(command=what, failed=tests[1])
            if tests is not None
            else _("{command}, failed").format(command=what)
            if failed
            else what
            for what, failed, tests in record.commands[:named]
        ]
        parts.append(_("Ran: {commands}.").format(commands="; ".join(ran)))
    if record.answers:
        # The user gave these answers: a few named, the rest counted (ten allowed calls
        # named in full made the digest longer than the turn's news).
        listed = "; ".join(record.answers[:named])
        parts.append(_("You answered: {answers}.").format(answers=listed))
        more = record.answer_count - min(named, len(record.answers))
        if more > 0:
            parts.append(_("More answers: {count}.").format(count=more))
    if record.errors:
        parts.append(_("Errors: {count}.").format(count=record.errors))
    if record.last_words:
        parts.append(_("Last words: {words}").format(words=record.last_words))
    if not parts:
        parts.append(_("Nothing changed and nothing ran."))
    return " ".join([_("{agent}'s turn:").format(agent=record.agent), *parts])
