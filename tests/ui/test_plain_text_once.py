"""Issue 30 item 7: the plain UI with ``--speech text`` prints each announcement once.

That is the setting the no-voice notice recommends for a braille display; each line used
to arrive twice (the plain UI's line on standard output and the text voice's on standard
error). The real ``announcer demo --ui plain --speech text`` runs on real pipes here.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from pathlib import Path

from tests.support.speech_record import spoken_in

SCENARIO = Path(__file__).parent / "scenarios" / "demo_short.json"
TIMEOUT = 60.0


def test_the_plain_demo_with_speech_text_prints_each_announcement_once() -> None:
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "demo",
            "--ui",
            "plain",
            "--scenario",
            str(SCENARIO),
            "--speech",
            "text",
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    lines = [line for line in (process.stdout + process.stderr).splitlines() if line.strip()]
    # Each sentence of the session is on the terminal, once (with its earcon's label).
    for sentence in ("Session started.", "Found it.", "All done."):
        assert sum(line.endswith(sentence) for line in lines) == 1, lines
    assert len(lines) == len(set(lines)), lines


WITHDRAWN = Path(__file__).parent / "scenarios" / "withdrawn.json"
DEMO_OVER = "The demo is over."


def run_with_open_input(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run the plain demo with its input open until it says it is over, then quit it."""
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdin is not None
    lines: queue.Queue[str] = queue.Queue()
    printed: list[str] = []

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        while not any(DEMO_OVER in line for line in printed):
            printed.append(lines.get(timeout=TIMEOUT))
        process.stdin.write("q\n")
        process.stdin.flush()
        process.wait(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=TIMEOUT)
    while not lines.empty():
        printed.append(lines.get())
    stderr = process.stderr.read() if process.stderr is not None else ""
    return subprocess.CompletedProcess(command, process.returncode, "".join(printed), stderr)


REASON = "Never mind the insurance question: the fare already includes it."


def test_the_plain_ui_says_a_withdrawn_question_once_with_the_agents_reason(
    tmp_path: Path,
) -> None:
    """Issue 30 item 1 in the plain UI: one notice, with the agent's reason, heard once."""
    record = tmp_path / "speech.jsonl"
    # Input stays open, as a person's terminal does: a plain UI whose input has ended
    # cannot reply, and the demo then never asks (issue 29 item 15).
    process = run_with_open_input(
        [
            sys.executable,
            "-m",
            "announcer",
            "demo",
            "--ui",
            "plain",
            "--scenario",
            str(WITHDRAWN),
            "--speech",
            f"jsonl:{record}",
        ]
    )
    assert process.returncode == 0, process.stderr
    heard = spoken_in(record)
    about_it = [text for text in heard if "withdrawn" in text.lower() or "any more" in text]
    assert len(about_it) == 1, heard
    assert about_it[0].endswith(REASON), heard
    assert sum(REASON in text for text in heard) == 1, heard
    printed = process.stdout.splitlines()
    assert sum(REASON in line for line in printed) == 1, printed


def test_plain_help_outside_an_agent_names_no_agent_commands() -> None:
    """Issue 30 item 8: :help listed :cancel and :commands, which only ACP agents have."""
    process = subprocess.run(
        [sys.executable, "-m", "announcer", "demo", "--ui", "plain", "--scenario", str(SCENARIO)],
        input=":help\n",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    [help_line] = [line for line in process.stdout.splitlines() if line.startswith("Commands:")]
    assert ":status" in help_line and ":quit" in help_line
    assert ":cancel" not in help_line and ":commands" not in help_line


def test_a_file_listened_to_is_named_by_its_name_not_its_whole_path(tmp_path: Path) -> None:
    """Issue 30 item 8: "Connected to /the/whole/absolute/path/session.jsonl." was heard."""
    folder = tmp_path / "deep" / "folder"
    folder.mkdir(parents=True)
    recording = folder / "session.jsonl"
    recording.write_text(
        (Path(__file__).parents[2] / "announcer" / "data" / "banking_session.jsonl")
        .read_text(encoding="utf-8")
        .splitlines(keepends=True)[0],
        encoding="utf-8",
    )
    record = tmp_path / "speech.jsonl"
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "listen",
            str(recording),
            "--ui",
            "plain",
            "--speech",
            f"jsonl:{record}",
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    heard = spoken_in(record)
    assert "Connected to session.jsonl." in heard, heard
    assert not any(str(folder) in text for text in heard), heard
