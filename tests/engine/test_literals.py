"""The agents' code blocks and addresses, kept whole for a command (issue 31, item 14)."""

from __future__ import annotations

from announcer.engine.literals import KEPT, Literals, code_blocks, links


def test_code_blocks_are_kept_as_written_without_their_fences() -> None:
    text = "Fix:\n\n```python\ndef f():\n    return 1\n```\n\nand\n~~~\nls -la\n~~~\n"
    assert code_blocks(text) == ["def f():\n    return 1", "ls -la"]


def test_an_address_is_kept_whole_without_the_sentences_punctuation() -> None:
    text = "See https://packaging.python.org/en/latest/tutorials/ (or https://x.org/a_(b))."
    assert links(text) == [
        "https://packaging.python.org/en/latest/tutorials/",
        "https://x.org/a_(b)",
    ]


def test_the_latest_are_kept_bounded() -> None:
    kept = Literals()
    for i in range(KEPT + 5):
        kept.note(f"```\nblock {i}\n```\nhttps://h{i}.example/")
    assert kept.latest("code") == [f"block {KEPT + 4}"]
    assert len(kept.latest("links")) == KEPT
    assert kept.latest("links")[-1] == f"https://h{KEPT + 4}.example/"
    assert Literals().latest("code") == []
