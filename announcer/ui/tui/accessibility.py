"""What a focused control is called aloud, and where the terminal cursor goes.

Textual hides the cursor at the top-left; braille displays and review cursors
follow the terminal cursor, so every focus change moves it onto the control.
"""

from __future__ import annotations

from textual.geometry import Offset
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, OptionList, RichLog, Select

from announcer.ui.tui.text import _


class SteadyInput(Input):
    """An Input whose caret does not blink (issue 6 §7: no blinking)."""

    cursor_blink = reactive(False, init=False)


def cursor_offset(widget: Widget) -> Offset:
    """The first cell of the control's content (an Input reports its own caret)."""
    region = widget.content_region
    return Offset(region.x, region.y)


def option_text(option_list: OptionList) -> str:
    index = option_list.highlighted
    if index is None or not option_list.option_count:
        return _("empty")
    option = option_list.get_option_at_index(index)
    return _("{label}, {position} of {count}").format(
        label=str(option.prompt), position=index + 1, count=option_list.option_count
    )


def spoken_name(widget: Widget) -> str:
    """A short screen-reader style name: label, role, value."""
    name = str(getattr(widget, "accessible_name", "") or "")
    if isinstance(widget, Button):
        return _("{label}, button").format(label=name or str(widget.label))
    if isinstance(widget, Input):
        value = widget.value or _("blank")
        return _("{label}, edit, {value}").format(label=name or widget.placeholder, value=value)
    if isinstance(widget, Checkbox):
        state = _("checked") if widget.value else _("not checked")
        return _("{label}, check box, {state}").format(label=name or str(widget.label), state=state)
    if isinstance(widget, Select):
        value = _("not set") if widget.is_blank() else str(widget.value)
        return _("{label}, list, {value}").format(label=name, value=value)
    if isinstance(widget, OptionList):
        return f"{name}, {option_text(widget)}" if name else option_text(widget)
    if isinstance(widget, RichLog):
        return name or _("Transcript")
    return name or type(widget).__name__
