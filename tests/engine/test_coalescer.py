"""The output coalescer splits streamed text where a listener expects a sentence to end."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from announcer.engine.coalescer import Coalescer
from tests.support.examples import examples


def stream(
    text: str, language: str = "en", seed: int = 3, low: int = 1, high: int = 8
) -> list[str]:
    """Feed ``text`` in random chunks the way a token stream arrives."""
    rng = random.Random(seed)
    coalescer = Coalescer(language)
    out: list[str] = []
    index = 0
    while index < len(text):
        step = rng.randint(low, high)
        out += coalescer.push(text[index : index + step])
        index += step
    return out + coalescer.flush()


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello there. How are you? I am fine!", ["Hello there.", "How are you?", "I am fine!"]),
        (
            "Dr. Smith met Mrs. Jones yesterday. They talked.",
            ["Dr. Smith met Mrs. Jones yesterday.", "They talked."],
        ),
        (
            "Bring tools, e.g. hammers, i.e. heavy ones, etc. and more. Done.",
            ["Bring tools, e.g. hammers, i.e. heavy ones, etc. and more.", "Done."],
        ),
        (
            "It costs $1,200.50 today. Python 3.11.7 is out. It is 98.6 degrees.",
            ["It costs $1,200.50 today.", "Python 3.11.7 is out.", "It is 98.6 degrees."],
        ),
        (
            "Thank you for you.Your order is ready. See report.pdf for details.",
            ["Thank you for you.", "Your order is ready.", "See report.pdf for details."],
        ),
        (
            "Open https://example.com/a.b?x=1 now. Mail a.b@example.com today. Then go.",
            ["Open https://example.com/a.b?x=1 now.", "Mail a.b@example.com today.", "Then go."],
        ),
        (
            "J. R. R. Tolkien wrote it. The U.S. Army came at 9 a.m. yesterday. Fine.",
            ["J. R. R. Tolkien wrote it.", "The U.S. Army came at 9 a.m. yesterday.", "Fine."],
        ),
        (
            "Wait... what happened? Nothing… Really.",
            ["Wait... what happened?", "Nothing…", "Really."],
        ),
        (
            'He said "Stop." Then he left. (It was late.) Next.',
            ['He said "Stop."', "Then he left.", "(It was late.)", "Next."],
        ),
        (
            "See No. 5 on p. 12 please. I said no. Fine.",
            ["See No. 5 on p. 12 please.", "I said no.", "Fine."],
        ),
        ("这是第一句。这是第二句！好吗？", ["这是第一句。", "这是第二句！", "好吗？"]),
        ("هل أنت بخير؟ نعم، شكرا.", ["هل أنت بخير؟", "نعم، شكرا."]),
        ("यह पहला वाक्य है। यह दूसरा है।", ["यह पहला वाक्य है।", "यह दूसरा है।"]),
    ],
)
def test_sentences_split_where_a_reader_expects(text: str, expected: list[str], seed: int) -> None:
    assert stream(text, seed=seed) == expected


def test_markdown_lists_headings_and_paragraphs_are_their_own_units() -> None:
    text = (
        "# Results\nThe plan:\n- apples\n- pears\n1. first item\n2. second item\n\nA new paragraph"
    )
    assert stream(text) == [
        "# Results",
        "The plan:",
        "- apples",
        "- pears",
        "1. first item",
        "2. second item",
        "A new paragraph",
    ]


def test_soft_wrapped_lines_stay_one_sentence() -> None:
    assert stream("This line wraps\nonto the next one. Done.") == [
        "This line wraps\nonto the next one.",
        "Done.",
    ]


def test_a_fenced_code_block_is_released_whole() -> None:
    text = "Code:\n```python\nx = 1.5\nprint(x)\n```\nAfter code. End."
    assert stream(text) == ["Code:\n```python\nx = 1.5\nprint(x)\n```", "After code.", "End."]


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        (
            "es",
            "El Sr. García llegó. La Sra. López también.",
            ["El Sr. García llegó.", "La Sra. López también."],
        ),
        ("es", "Vea la pág. 4 del informe. Gracias.", ["Vea la pág. 4 del informe.", "Gracias."]),
        (
            "fr",
            "M. Dupont est là. Mme Martin aussi, cf. annexe 2. Merci.",
            ["M. Dupont est là.", "Mme Martin aussi, cf. annexe 2.", "Merci."],
        ),
        (
            "de",
            "Am 3. Oktober kam Hr. Müller, z.B. mit Dr. Weber. Dann ging er.",
            ["Am 3. Oktober kam Hr. Müller, z.B. mit Dr. Weber.", "Dann ging er."],
        ),
        (
            "de",
            "Das ist Nr. 7 der Liste, bzw. Nr. 8. Gut.",
            ["Das ist Nr. 7 der Liste, bzw. Nr. 8.", "Gut."],
        ),
        (
            "pt",
            "A Sra. Silva chegou. O Dr. Souza também.",
            ["A Sra. Silva chegou.", "O Dr. Souza também."],
        ),
        ("pt-BR", "A Profa. Lima deu aula. Foi ótima.", ["A Profa. Lima deu aula.", "Foi ótima."]),
    ],
)
def test_language_specific_abbreviations(language: str, text: str, expected: list[str]) -> None:
    assert stream(text, language) == expected


def test_a_sentence_is_released_on_the_push_that_brings_the_next_word() -> None:
    coalescer = Coalescer()
    assert coalescer.push("The transfer is done") == []
    assert coalescer.push(".") == []
    assert coalescer.push("  ") == []
    assert coalescer.push("N") == ["The transfer is done."]
    assert coalescer.flush() == ["N"]


def test_a_stalled_stream_releases_the_sentence_after_the_pause() -> None:
    coalescer = Coalescer(pause_seconds=0.3)
    assert coalescer.push("Balance checked.", now=10.0) == []
    assert coalescer.waiting_for_pause
    assert coalescer.poll(10.2) == []
    assert coalescer.poll(10.31) == ["Balance checked."]
    assert coalescer.push(" Next one", now=10.4) == []
    assert coalescer.flush() == ["Next one"]


def test_a_stall_after_an_abbreviation_does_not_release_it() -> None:
    coalescer = Coalescer()
    coalescer.push("Ask Dr.", now=0.0)
    assert coalescer.poll(5.0) == []
    assert coalescer.push(" Okafor today.", now=5.1) == []
    assert coalescer.flush() == ["Ask Dr. Okafor today."]


def test_long_unpunctuated_text_is_cut_at_a_clause_or_word_boundary() -> None:
    clause = "the agent keeps listing accounts and balances and dates"
    text = ", ".join([clause] * 12)
    pieces = stream(text)
    assert len(pieces) > 1
    assert all(len(piece) <= 250 for piece in pieces)
    assert all(piece.endswith(",") for piece in pieces[:-1])
    words = text.split()
    assert " ".join(pieces).split() == words


_ETC = [
    "adduser.conf",
    "alternatives",
    "apt",
    "bash.bashrc",
    "bindresvport.blacklist",
    "ca-certificates",
    "ca-certificates.conf",
    "cron.d",
    "cron.daily",
    "debconf.conf",
    "debian_version",
    "default",
    "deluser.conf",
    "dpkg",
    "e2scrub.conf",
    "environment",
    "fstab",
    "gai.conf",
    "group",
    "group-",
    "gshadow",
    "host.conf",
    "hostname",
    "hosts",
    "init.d",
    "issue",
    "issue.net",
    "kernel",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
]


@pytest.mark.parametrize("separator", ["\n", "\t", "  "])
def test_a_long_line_is_cut_between_words_never_inside_one(separator: str) -> None:
    """issue 31 item 13: a listing of /etc was heard as "… debconf.conf de" then
    "bian_version …": with no sentence end or clause break, the cut fell inside a word
    whenever the words were parted by line breaks or tabs instead of single spaces."""
    text = separator.join(_ETC)
    assert len(text) > 250
    pieces = stream(text)
    assert len(pieces) > 1 and all(len(piece) <= 250 for piece in pieces)
    for piece in pieces:
        assert all(word in _ETC for word in piece.split()), piece
    assert " ".join(pieces).split() == _ETC


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(st.text(alphabet="ab_-1", min_size=3, max_size=40), min_size=12, max_size=60),
    st.lists(st.sampled_from([" ", "\n", "\t", " \t", "\n "]), min_size=1, max_size=5),
    st.integers(min_value=0, max_value=10_000),
)
def test_no_word_shorter_than_a_piece_is_ever_torn(
    words: list[str], separators: list[str], seed: int
) -> None:
    text = "".join(word + separators[i % len(separators)] for i, word in enumerate(words))
    pieces = stream(text, seed=seed)
    assert " ".join(pieces).split() == text.split()


def test_text_without_any_space_is_still_cut() -> None:
    pieces = stream("x" * 1000)
    assert all(len(piece) <= 250 for piece in pieces)
    assert "".join(pieces) == "x" * 1000


def test_custom_max_chars_and_validation() -> None:
    coalescer = Coalescer(max_chars=40)
    out = coalescer.push("one two three four five six seven eight nine ten eleven")
    assert out and len(out[0]) <= 40
    with pytest.raises(ValueError, match="max_chars"):
        Coalescer(max_chars=5)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab .!?\n-1#`\"'…")), max_size=300),
    st.integers(min_value=0, max_value=10_000),
)
def test_no_character_but_whitespace_is_ever_lost(text: str, seed: int) -> None:
    pieces = stream(text, seed=seed)
    assert all(piece and piece == piece.strip() for piece in pieces)
    assert "".join("".join(pieces).split()) == "".join(text.split())
