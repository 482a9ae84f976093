"""Every part of Textual's private inside that announcer reads or patches, in one place.

Textual is not pinned (``textual>=0.80``) and may rename a private name in any release.
Each one is reached only through this module, with what happens when it is gone (the
feature falls back, nothing crashes), and ``tests/ui/test_textual_private.py`` fails
when one is missing or changed, so an upgrade is caught by the suite, not by a user.

- ``OptionList._index_to_line``: the screen line of an option (the terminal cursor on
  the highlighted row, for braille and review cursors);
- ``Select._options``: the labels a Select shows for its values (its value said aloud);
- ``DOMNode._merged_bindings`` and ``_bindings``: a node's key bindings, described in the
  user's language;
- ``textual.widgets._select.SelectOverlay``: a Select's open list, closed by a key;
- ``TextArea._on_key``: the message box takes Enter before the TextArea does;
- ``textual._xterm_parser.XTermParser``, ``textual.drivers._writer_thread.WriterThread``
  (its ``_file``, ``_queue``) and ``LinuxDriver`` (``_app``, ``_loop``, ``_debug``,
  ``run_input_thread``): the runner's patches for a terminal that closes
  (``ui/tui/runner.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.binding import BindingsMap
    from textual.widgets import OptionList, Select

#: the instance attributes the runner's patched ``WriterThread.run`` reads
WRITER_THREAD_ATTRIBUTES = ("_file", "_queue")
#: what the runner's patched ``LinuxDriver.run_input_thread`` reads of the driver
LINUX_DRIVER_ATTRIBUTES = ("_app", "_loop", "_debug", "fileno", "exit_event")


def option_line(option_list: OptionList, index: int) -> int | None:
    """The line (in the list's content) where option ``index`` starts; None if unknown."""
    lines: dict[int, int] = getattr(option_list, "_index_to_line", {})
    return lines.get(index)


def select_options(select: Select[Any]) -> list[tuple[object, object]]:
    """A Select's (label, value) pairs as it shows them; empty if unknown."""
    return list(getattr(select, "_options", ()))


def class_bindings(node: object) -> BindingsMap | None:
    """The bindings of ``node``'s class as written (``BINDINGS`` of it and its bases)."""
    return getattr(type(node), "_merged_bindings", None)


def node_bindings(node: object) -> BindingsMap | None:
    """The bindings this node uses (a copy of its class's, changed per node)."""
    return getattr(node, "_bindings", None)


def select_overlay() -> type[Any]:
    """The widget that is a Select's open list."""
    from textual.widgets._select import SelectOverlay

    return SelectOverlay


def xterm_parser() -> type[Any]:
    """Textual's parser of terminal input (the runner's input thread feeds it)."""
    from textual._xterm_parser import XTermParser

    return XTermParser


def writer_thread() -> type[Any]:
    """Textual's output thread (the runner keeps it draining after the terminal closed)."""
    from textual.drivers import _writer_thread

    return _writer_thread.WriterThread
