"""Other agent event formats -> AAEP events: AEP, the Universal Agent API, agent CLI streams, hooks.

``get_adapter(name)`` returns a fresh per-stream :class:`FormatAdapter`; feed it
lines with ``feed(line, now)`` and call ``finish(now)`` at end of input. The
events it returns are plain AAEP dicts the engine decodes like any frame.
"""

from __future__ import annotations

from collections.abc import Callable

from announcer.formats.aep import AepAdapter
from announcer.formats.base import AdapterOutput, Diagnostic, FormatAdapter, JsonObject
from announcer.formats.cli_streams import CLI_STREAMS
from announcer.formats.hooks import (
    MappedHookAdapter,
    claude_code_hooks_adapter,
    codex_hooks_adapter,
    hook_confirmation,
)
from announcer.formats.mapping import Mapping, MappingError, parse_mapping
from announcer.formats.wrapper import AgentWrapperAdapter
from announcer.i18n.translate import SOURCE_LANGUAGE


class AaepPassthrough(FormatAdapter):
    """``--format aaep``: the lines already are AAEP events; validation is the engine's job."""

    name = "aaep"

    def handle(self, obj: JsonObject, now: float) -> None:
        self.emit(obj)


_FACTORIES: dict[str, Callable[[], FormatAdapter]] = {
    "aaep": AaepPassthrough,
    "aep": AepAdapter,
    "agent-wrapper": AgentWrapperAdapter,
    **CLI_STREAMS,  # claude-code, codex, gemini, opencode
    "claude-code-hooks": claude_code_hooks_adapter,
    "codex-hooks": codex_hooks_adapter,
}

#: every name ``get_adapter`` accepts (``announcer listen --format NAME``)
FORMAT_NAMES: tuple[str, ...] = tuple(_FACTORIES)


def get_adapter(
    name: str, *, mapping: Mapping | None = None, language: str = SOURCE_LANGUAGE
) -> FormatAdapter:
    """A fresh adapter for one stream; ``mapping`` makes native hook payloads audible.

    ``language`` (a BCP 47 tag, e.g. the user's first language) is the language of the
    sentences the adapter makes up; the nearest shipped catalog is used, else English.
    """
    adapter: FormatAdapter
    if mapping is not None:
        adapter = MappedHookAdapter(mapping, name)
    else:
        factory = _FACTORIES.get(name)
        if factory is None:
            raise ValueError(f"unknown format {name!r}; known formats: {', '.join(FORMAT_NAMES)}")
        adapter = factory()
    adapter.set_language(language)
    return adapter


__all__ = [
    "FORMAT_NAMES",
    "AdapterOutput",
    "Diagnostic",
    "FormatAdapter",
    "Mapping",
    "MappingError",
    "get_adapter",
    "hook_confirmation",
    "parse_mapping",
]
