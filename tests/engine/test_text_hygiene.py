"""Producer text is made fit for the ear before it is spoken."""

from __future__ import annotations

from announcer.engine.text_hygiene import (
    clean_for_speech,
    describe_code_block,
    strip_terminal_codes,
    url_host,
)


def test_markdown_reads_naturally() -> None:
    text = (
        "# Results\nHere is **bold**, *italic*, _emphasis_, ~~gone~~ and `code`.\n"
        "- apples\n- pears\n\nKeep snake_case_names and 2*3*4 intact."
    )
    assert clean_for_speech(text) == (
        "Results. Here is bold, italic, emphasis, gone and code. apples, pears. "
        "Keep snake_case_names and 2*3*4 intact."
    )


def test_numbered_lists_keep_their_numbers() -> None:
    assert clean_for_speech("Steps:\n1. Open the app\n2. Sign in") == (
        "Steps: 1: Open the app, 2: Sign in."
    )


def test_fenced_code_is_replaced_by_a_short_phrase() -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(12))
    text = f"Here it is:\n```python\n{code}\n```\nRun it."
    assert clean_for_speech(text) == "Here it is: code block, 12 lines, Python. Run it."
    assert describe_code_block("x\n", "", "en") == "code block, 1 line"
    assert describe_code_block("a\nb\n", "rs", "en") == "code block, 2 lines, Rust"


def test_an_unclosed_fence_still_becomes_a_phrase() -> None:
    assert (
        clean_for_speech("Partial:\n```bash\nls -la\nrm x")
        == "Partial: code block, 2 lines, shell."
    )


def test_urls_are_shortened_to_their_host() -> None:
    text = (
        "See https://www.example.com/a/b?token=secret#x and [the docs](https://docs.python.org/3/)."
    )
    assert clean_for_speech(text) == "See example.com and the docs."
    assert url_host("www.bank.example/login") == "bank.example"


def test_terminal_escapes_and_control_characters_are_removed() -> None:
    raw = "\x1b[1;31mError\x1b[0m: disk \x07full\x1b]0;title\x07 now\x00\u202e."
    assert strip_terminal_codes(raw) == "Error: disk full now."
    assert clean_for_speech(raw) == "Error: disk full now."


def test_tables_are_read_row_by_row() -> None:
    assert clean_for_speech("| Name | Amount |\n|---|---:|\n| Rent | 900 |") == (
        "Name, Amount. Rent, 900."
    )


def test_very_long_text_is_shortened_with_a_note() -> None:
    spoken = clean_for_speech("word " * 4000, max_chars=200)
    assert len(spoken) < 260
    assert spoken.endswith("(shortened, full text in the transcript)")


def test_producer_markup_is_never_interpreted() -> None:
    assert (
        clean_for_speech("[b]<script>alert(1)</script>[/b]") == "[b]<script>alert(1)</script>[/b]"
    )


def test_a_single_list_item_loses_its_marker() -> None:
    assert clean_for_speech("- The transfer shows tomorrow.") == "The transfer shows tomorrow."
    assert clean_for_speech("3. Sign the form") == "3: Sign the form."
    assert clean_for_speech("Plain words -- nothing else.") == "Plain words -- nothing else."
