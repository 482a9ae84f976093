"""Producer text is made fit for the ear before it is spoken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from announcer.engine.text_hygiene import (
    clean_for_speech,
    describe_code_block,
    strip_terminal_codes,
    url_host,
)
from tests.shared_data import SHARED


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


# The hand-checked tricky cases that benchmarks/text_hygiene.py also scores.
HYGIENE_CASES = json.loads((Path(__file__).parent / "data" / "hygiene_cases.json").read_text())


@pytest.mark.parametrize("case", HYGIENE_CASES, ids=[case["name"] for case in HYGIENE_CASES])
def test_tricky_markdown_is_read_by_the_rules(case: dict[str, str]) -> None:
    assert clean_for_speech(case["text"]) == case["expected"]


def test_the_tricky_cases_cover_every_class_the_rules_name() -> None:
    names = {case["name"] for case in HYGIENE_CASES}
    for needed in (
        "nested_emphasis",
        "star_as_multiplication",
        "snake_case_identifiers",
        "code_span_holding_markdown",
        "numbered_list",
        "link_with_parentheses_in_url",
        "setext_headings",
        "inline_html_stays_literal",
        "table_with_inline_markup",
    ):
        assert needed in names


def _peer_strings(path: Path) -> list[str]:
    lines = [path.read_text()] if path.suffix == ".json" else path.read_text().splitlines()
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for line in lines:
        walk(json.loads(line))
    return found


def test_real_codex_reasoning_and_messages_lose_their_markup() -> None:
    texts = _peer_strings(SHARED / "peers" / "codex-exec" / "exec-json-sample.jsonl")
    assert "**Searching for README files**" in texts
    assert clean_for_speech("**Searching for README files**") == "Searching for README files"
    message = next(text for text in texts if "`README.md`" in text)
    assert clean_for_speech(message) == "Yep — there’s a README.md in the repository root."


def test_real_acp_descriptions_read_reference_links_and_nested_lists() -> None:
    texts = _peer_strings(SHARED / "peers" / "acp" / "schema-v1.json")
    reference = next(text for text in texts if text.startswith("A message (request"))
    assert clean_for_speech(reference) == (
        'A message (request, response, or notification) with "jsonrpc": "2.0" specified as '
        "required by JSON-RPC 2.0 Specification."
    )
    cancel = next(text for text in texts if text.startswith("Cancels an ongoing request."))
    spoken = clean_for_speech(cancel)
    assert "1: MAY cancel the corresponding request activity and all nested activities, " in spoken
    assert "Error response with code -32800 (Cancelled). See protocol docs: Cancellation" in spoken
    assert "`" not in spoken and "](" not in spoken and "- " not in spoken
    # Every markdown-bearing peer text is spoken without markup or raw URLs.
    for text in texts:
        spoken = clean_for_speech(text)
        assert "**" not in spoken and "](" not in spoken and "https://" not in spoken, text


def test_plain_paragraphs_end_as_sentences_with_or_without_markup() -> None:
    assert clean_for_speech("All done\n\nNothing failed") == "All done. Nothing failed"
    assert clean_for_speech("All **done**\n\nNothing failed") == "All done. Nothing failed"
    assert clean_for_speech("One line\nwraps here.") == "One line wraps here."


def test_intraword_stars_stay_but_emphasis_between_words_goes() -> None:
    assert clean_for_speech("Match *.py* files with a*b*c, **not** this.") == (
        "Match .py files with a*b*c, not this."
    )


def test_text_nested_past_the_parser_limit_is_still_read_in_full() -> None:
    deep = "> " * 40 + "keep every word of this"
    assert clean_for_speech(deep).endswith("keep every word of this")
    nested = "\n".join("  " * level + f"- item {level}" for level in range(60))
    assert "item 59" in clean_for_speech(nested, max_chars=5_000)


def test_a_huge_code_block_is_counted_whole_and_the_cut_is_said() -> None:
    listing = "Intro\n```py\n" + "x = 1\n" * 50_000 + "```\nDone."
    assert clean_for_speech(listing) == (
        "Intro. code block, 50,000 lines, Python. (shortened, full text in the transcript)"
    )
    unclosed = "Output:\n~~~\n" + "ok\n" * 40_000
    assert clean_for_speech(unclosed) == (
        "Output: code block, 40,000 lines. (shortened, full text in the transcript)"
    )


def test_a_url_keeps_balanced_parentheses_but_not_sentence_punctuation() -> None:
    assert clean_for_speech("Read https://example.com/a_(b). Then (see https://x.org/y).") == (
        "Read example.com. Then (see x.org)."
    )
    assert url_host("www.bank.example/login") == "bank.example"
