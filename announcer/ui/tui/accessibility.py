"""What a focused control is called aloud, and where the terminal cursor goes.

Textual hides the cursor at the top-left; braille displays and review cursors
follow the terminal cursor, so every focus change moves it onto the control.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.geometry import Offset
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import (
    Button,
    Checkbox,
    Footer,
    Input,
    OptionList,
    RichLog,
    Select,
    TextArea,
)

from announcer.ui.tui.text import _
from announcer.ui.tui.textual_private import option_line, select_options


class SteadyInput(Input):
    """An Input whose caret does not blink (issue 6 §7: no blinking)."""

    cursor_blink = reactive(False, init=False)


FOOTER_KEYS_PER_ROW = 4


class WrappingFooter(Footer):
    """The keys of the screen, four to a row, so none runs off an 80-column terminal.

    Textual's Footer puts every key on one row (one grid column each); in German or
    Arabic the main screen's keys need about 110 columns.
    """

    DEFAULT_CSS = "WrappingFooter { layout: grid; grid-columns: 1fr; height: auto; }"

    def __init__(self) -> None:
        super().__init__(show_command_palette=False, compact=True)

    def compose(self) -> ComposeResult:
        yield from super().compose()
        self.styles.grid_size_columns = FOOTER_KEYS_PER_ROW


def cursor_offset(widget: Widget) -> Offset:
    """Where the terminal cursor goes for a focused control.

    An Input has its caret; a list its highlighted row (so braille and review
    cursors follow the arrows); the transcript its newest entry; anything else the
    first cell of its content.
    """
    if isinstance(widget, (Input, TextArea)):
        return widget.cursor_screen_offset
    region = widget.content_region
    if isinstance(widget, OptionList) and widget.highlighted is not None:
        line = option_line(widget, widget.highlighted)
        if line is not None:
            y = region.y + line - round(widget.scroll_offset.y)
            return Offset(region.x, min(max(y, region.y), region.bottom - 1))
    newest = getattr(widget, "newest_line", None)
    if isinstance(newest, int):  # the transcript: where the newest words are
        y = region.y + newest - round(widget.scroll_offset.y)
        return Offset(region.x, min(max(y, region.y), region.bottom - 1))
    return Offset(region.x, region.y)


def option_text(option_list: OptionList) -> str:
    index = option_list.highlighted
    if index is None or not option_list.option_count:
        return _("empty")
    option = option_list.get_option_at_index(index)
    return _("{label}, {position} of {count}").format(
        label=str(option.prompt), position=index + 1, count=option_list.option_count
    )


def select_label(select: Select[object]) -> str:
    """The words the Select shows for its value (translated), not the stored value."""
    for label, value in select_options(select):
        if value == select.value:
            return str(label)
    return str(select.value)


def spoken_name(widget: Widget) -> str:
    """A short screen-reader style name: label, role, value."""
    name = str(getattr(widget, "accessible_name", "") or "")
    if isinstance(widget, Button):
        return _("{label}, button").format(label=name or str(widget.label))
    if isinstance(widget, Input):
        value = widget.value or _("blank")
        return _("{label}, edit, {value}").format(label=name or widget.placeholder, value=value)
    if isinstance(widget, TextArea):
        value = " ".join(widget.text.split()) or _("blank")
        return _("{label}, edit, {value}").format(label=name, value=value)
    if isinstance(widget, Checkbox):
        state = _("on") if widget.value else _("off")
        return _("{label}, check box, {state}").format(label=name or str(widget.label), state=state)
    if isinstance(widget, Select):
        value = _("not set") if widget.is_blank() else select_label(widget)
        return _("{label}, list, {value}").format(label=name, value=value)
    if isinstance(widget, OptionList):
        return f"{name}, {option_text(widget)}" if name else option_text(widget)
    if isinstance(widget, RichLog):
        return name or _("Transcript")
    return name or _("Scroll area")
