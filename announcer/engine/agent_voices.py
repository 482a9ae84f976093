"""Several agents, several voices (issue 33, item 4): who speaks with which voice, and the
shortest name that tells the agents apart.

With two or more agents side by side, a voice of its own lets the user know whose words
these are before any name is said; the name said before a new speaker's words is then only
as long as it must be to tell them apart ("Claude" and "Codex", not "Claude Code" and
"Codex CLI"). Sans-I/O: names and voice names in, choices out; the runtime asks the speech
backend which voices are installed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

#: where a name may be cut: between words, and at "-" or "_" ("claude-code")
_WORD = re.compile(r"[^\s_-]+")


def _words(name: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(name))


def distinct_names(names: Sequence[str]) -> dict[str, str]:
    """Each name cut to its fewest leading words that no other name begins with too.

    ``["Claude Code", "Codex CLI"]`` -> ``Claude``, ``Codex``; ``["claude", "claude 2"]``
    stay whole (one is all of the other). A single name is kept as it is.
    """
    shortened: dict[str, str] = {}
    keys = [name.casefold() for name in names]
    for name in names:
        words = _words(name)
        shortened[name] = name
        if len(names) < 2:
            continue
        for count in range(1, len(words)):
            cut = name[: words[count - 1].end()]
            key = cut.casefold()
            others = [k for k in keys if k != name.casefold()]
            if not any(_begins_with(other, key) for other in others):
                shortened[name] = cut
                break
    return shortened


def _begins_with(name: str, cut: str) -> bool:
    """Whether ``name`` begins with the whole words of ``cut`` (both case-folded)."""
    if not name.startswith(cut):
        return False
    rest = name[len(cut) :]
    return not rest or not _WORD.match(rest[:1])


def agent_voices(
    agents: Sequence[str],
    chosen: Mapping[str, str],
    installed: Sequence[str],
    own: str | None = None,
) -> dict[str, str | None]:
    """The voice each agent speaks with; None is the user's own voice (``own``).

    A voice the user chose for an agent (``agent_voices`` setting, by the agent's short
    name) is kept. The first agent without one keeps the user's own voice; each other gets
    the next installed voice that no agent and not the user's own voice uses. With too few
    installed voices, the rest keep the user's voice (their names still tell them apart).
    """
    folded = {key.casefold(): value for key, value in chosen.items()}
    taken = {voice.casefold() for voice in folded.values()}
    if own:
        taken.add(own.casefold())
    free = [voice for voice in installed if voice.casefold() not in taken]
    voices: dict[str, str | None] = {}
    # an agent the user gave their own voice to already has it
    own_given = own is not None and own.casefold() in {v.casefold() for v in folded.values()}
    for agent in agents:
        mine = folded.get(agent.casefold())
        if mine is not None:
            voices[agent] = mine
        elif not own_given:
            voices[agent] = None
            own_given = True
        elif free:
            voices[agent] = free.pop(0)
        else:
            voices[agent] = None
    return voices
