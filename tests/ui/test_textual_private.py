"""Each Textual private name announcer uses still means what it did (issue 32, step 3).

``announcer/ui/tui/textual_private.py`` is the one place announcer reaches into
Textual's inside; in the app each read falls back quietly when a name is gone (the
cursor stays at the list's top, a Select's value is said as stored, key descriptions
stay English). Here each one is read on real widgets of the installed Textual, so a
Textual release that renames or changes one fails the suite instead.
"""

from __future__ import annotations

import asyncio
import inspect
import io
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import BindingsMap, BindingType
from textual.widgets import OptionList, Select, TextArea
from textual.widgets.option_list import Option

from announcer.ui.tui import textual_private as private
from announcer.ui.tui.accessibility import cursor_offset, select_label


class Widgets(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [("ctrl+y", "noop", "Say it again")]

    def compose(self) -> ComposeResult:
        # the first option takes two lines: the third starts on line three, not two
        yield OptionList(Option("first\nand its second line"), Option("second"), Option("third"))
        yield Select(
            [("Terse", "terse"), ("Detailed", "detailed")], value="detailed", allow_blank=False
        )
        yield TextArea()


async def test_an_options_line_is_where_it_is_drawn_and_the_cursor_goes_there() -> None:
    app = Widgets()
    async with app.run_test(size=(40, 20)) as pilot:
        options = app.query_one(OptionList)
        assert [private.option_line(options, i) for i in range(3)] == [0, 2, 3]
        options.highlighted = 2
        options.focus()
        await pilot.pause()
        assert cursor_offset(options).y == options.content_region.y + 3


async def test_a_selects_labels_are_read_for_its_value_and_its_open_list_found() -> None:
    app = Widgets()
    async with app.run_test(size=(40, 20)):
        select = app.query_one(Select)
        assert private.select_options(select) == [("Terse", "terse"), ("Detailed", "detailed")]
        assert select_label(select) == "Detailed"
        overlays = list(select.query(private.select_overlay()))
        assert len(overlays) == 1


async def test_a_nodes_bindings_are_its_class_bindings_and_its_own_copy() -> None:
    app = Widgets()
    async with app.run_test(size=(40, 20)):
        written = private.class_bindings(app)
        own = private.node_bindings(app)
        assert isinstance(written, BindingsMap) and isinstance(own, BindingsMap)
        assert written is not own  # a node's own copy: translating it leaves the class's
        assert [b.description for b in written.key_to_bindings["ctrl+y"]] == ["Say it again"]
        assert [b.description for b in own.key_to_bindings["ctrl+y"]] == ["Say it again"]


def test_the_terminal_parser_reads_a_key() -> None:
    parser = private.xterm_parser()(False)
    keys = [event.key for event in parser.feed("a")]
    assert keys == ["a"]
    assert callable(parser.tick)


def test_the_output_thread_holds_the_file_and_queue_the_runner_drains() -> None:
    out = io.StringIO()
    thread = private.writer_thread()(out)
    for name in private.WRITER_THREAD_ATTRIBUTES:
        assert hasattr(thread, name), name
    thread.write("words")
    assert thread._queue.get_nowait() == "words"
    assert thread._file is out


async def test_the_linux_driver_holds_what_the_runners_input_thread_reads() -> None:
    from textual.drivers.linux_driver import LinuxDriver

    app = Widgets()
    driver = LinuxDriver(app, debug=False)
    for name in private.LINUX_DRIVER_ATTRIBUTES:
        assert hasattr(driver, name), name
    assert driver._app is app and driver._loop is asyncio.get_running_loop()
    assert callable(LinuxDriver.run_input_thread) and callable(driver.process_message)


def test_the_text_area_takes_keys_in_a_private_handler_the_message_box_overrides() -> None:
    assert inspect.iscoroutinefunction(TextArea._on_key)
