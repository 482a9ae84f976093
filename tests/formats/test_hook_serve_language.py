"""``announcer hook serve`` speaks the user's language (settings file or ``--language``)."""

from __future__ import annotations

from pathlib import Path

from tests.formats.test_hook_bridge import (
    PRE_TOOL_USE,
    Served,
    hook_output,
    run_hook,
    sock,  # noqa: F401 (the fixture)
)

ENGLISH = (
    "Listening for",
    "Press y then Enter",
    "Please type y",
    "Allowed.",
    "Denied.",
    "wants to run",
)


def test_serve_in_spanish_from_the_settings_file(
    sock: Path,  # noqa: F811
    isolated_settings_file: Path,
) -> None:
    isolated_settings_file.parent.mkdir(parents=True, exist_ok=True)
    isolated_settings_file.write_text('languages = ["es"]\n', encoding="utf-8")
    served = Served(sock)
    try:
        served.wait_for("Escuchando los hooks de Claude Code y Codex en ")
        hook = run_hook(PRE_TOOL_USE, sock)
        question = served.wait_for("Claude Code quiere")
        assert question == (
            "Claude Code quiere ejecutar Bash: rm -rf build. Dice: Clean the build folder."
            " ¿Permitir?"
        )
        served.wait_for(
            "Pulse y y luego Intro, después c y luego Intro, para permitir; "
            "n y luego Intro para denegar."
        )
        served.answer("¿qué?\n")  # not an answer: asked again in Spanish, nothing decided
        served.wait_for("Escriba y para permitir o n para denegar.")
        served.type("y\n")
        served.wait_for("¿Permitir? Escriba c y pulse Intro para confirmar")
        served.type("c\n")  # allowing takes a second key
        served.wait_for("Permitido.")
        decision = hook_output(hook)["hookSpecificOutput"]["permissionDecision"]
        assert decision == "allow"
    finally:
        served.stop()
    assert not [line for line in served.seen if line.startswith(ENGLISH)], served.seen


def test_serve_language_flag_wins_and_takes_a_comma_list(sock: Path) -> None:  # noqa: F811
    served = Served(sock, "hook", "serve", "--socket", str(sock), "--language", "es-MX,en")
    try:
        served.wait_for("Escuchando los hooks")
        hook = run_hook(PRE_TOOL_USE, sock)
        served.wait_for("Pulse y")
        served.answer("n\n")
        served.wait_for("Denegado.")
        decision = hook_output(hook)["hookSpecificOutput"]["permissionDecision"]
        assert decision == "deny"
    finally:
        served.stop()
    assert not [line for line in served.seen if line.startswith(ENGLISH)], served.seen
