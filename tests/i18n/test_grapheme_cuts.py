"""§11.3.3: every place announcer cuts producer text cuts between grapheme clusters.

Thai has no spaces to cut at, Devanagari stacks vowel signs and viramas on its
consonants, Arabic carries harakat, and emoji ZWJ sequences are one character to a
reader. A cut inside any of them makes a voice read a torn mark on its own ("an
utterance began with a tone mark torn from its consonant"). Each cutting path is
fed generated text in these scripts and every piece is checked to start and end on
a cluster boundary of the original text.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from announcer.engine.coalescer import Coalescer
from announcer.engine.outputs import HELD_OUTPUT_LIMIT, OutputStreams
from announcer.engine.text_hygiene import clean_for_speech
from announcer.formats.bounds import cut_utf8, split_text
from announcer.formats.speakable import clip
from announcer.i18n.text import grapheme_floor, graphemes
from announcer.protocol.decode import decode_frame
from announcer.protocol.events import OutputStreaming
from tests.engine.aaep import frame
from tests.support.examples import examples

_THAI_CONSONANTS = [chr(c) for c in range(0x0E01, 0x0E2F)]
_THAI_ABOVE = ["\u0e31", "\u0e34", "\u0e35", "\u0e36", "\u0e37", "\u0e38", "\u0e39", ""]
_THAI_TONES = ["\u0e48", "\u0e49", "\u0e4a", "\u0e4b", ""]
_DEVANAGARI_CONSONANTS = [chr(c) for c in range(0x0915, 0x093A)]
_DEVANAGARI_SIGNS = ["\u093e", "\u093f", "\u0940", "\u0947", "\u094b", "\u0941", ""]
_ARABIC_LETTERS = [chr(c) for c in range(0x0628, 0x064B)]
_HARAKAT = ["\u064b", "\u064e", "\u064f", "\u0650", "\u0651\u064e", "\u0652", ""]
_EMOJI = ["👩\u200d💻", "👨\u200d👩\u200d👧\u200d👦", "🏳\ufe0f\u200d🌈", "👍🏽", "🇹🇭", "❤\ufe0f"]

thai = st.builds(
    lambda c, a, t: c + a + t,
    st.sampled_from(_THAI_CONSONANTS),
    st.sampled_from(_THAI_ABOVE),
    st.sampled_from(_THAI_TONES),
)
devanagari = st.builds(
    lambda c, half, s, n: (half + "\u094d" if half else "") + c + s + n,
    st.sampled_from(_DEVANAGARI_CONSONANTS),
    st.sampled_from([*_DEVANAGARI_CONSONANTS[:5], "", "", ""]),
    st.sampled_from(_DEVANAGARI_SIGNS),
    st.sampled_from(["\u0902", ""]),
)
arabic = st.builds(lambda c, h: c + h, st.sampled_from(_ARABIC_LETTERS), st.sampled_from(_HARAKAT))
emoji = st.sampled_from(_EMOJI)


def words(syllable: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(syllable, min_size=1, max_size=12).map("".join)


def texts(
    max_words: int = 120, separators: tuple[str, ...] = ("", "", " ", ", ", ". ")
) -> st.SearchStrategy[str]:
    word = st.one_of(words(thai), words(devanagari), words(arabic), words(emoji))
    separator = st.sampled_from(separators)
    return st.lists(st.tuples(word, separator), min_size=1, max_size=max_words).map(
        lambda pairs: "".join(w + s for w, s in pairs)
    )


def boundaries(text: str) -> set[int]:
    found = {0}
    position = 0
    for cluster in graphemes(text):
        position += len(cluster)
        found.add(position)
    return found


def assert_whole_clusters(text: str, pieces: list[str]) -> None:
    """Each piece is a run of ``text`` starting and ending between clusters, in order."""
    edges = boundaries(text)
    cursor = 0
    for piece in pieces:
        start = text.find(piece, cursor)
        assert start >= 0, f"piece not taken from the text in order: {piece!r}"
        assert start in edges, f"piece starts inside a cluster: {piece[:3]!r}"
        assert start + len(piece) in edges, f"piece ends inside a cluster: {piece[-3:]!r}"
        cursor = start + len(piece)


@settings(max_examples=examples(150), deadline=None)
@given(text=texts(), index=st.integers(min_value=-2, max_value=3000))
def test_the_floor_is_a_boundary_at_or_before_the_index(text: str, index: int) -> None:
    floor = grapheme_floor(text, index)
    assert floor in boundaries(text)
    assert floor <= max(index, 0)
    assert floor == max(e for e in boundaries(text) if e <= max(index, 0))


def test_progress_keeps_a_first_cluster_longer_than_the_limit_whole() -> None:
    family = "👨\u200d👩\u200d👧\u200d👦"
    assert grapheme_floor(family + "x", 3) == 0
    assert grapheme_floor(family + "x", 3, progress=True) == len(family)


@settings(max_examples=examples(120), deadline=None)
@given(
    text=texts(separators=("", "", "", "", " ", ". ")),
    cuts=st.lists(st.integers(min_value=1, max_value=40), max_size=60),
)
def test_the_coalescer_releases_whole_clusters_however_the_stream_is_split(
    text: str, cuts: list[int]
) -> None:
    """Tokens arrive split anywhere, even inside a cluster; what is released never is."""
    coalescer = Coalescer("th", max_chars=250)
    released: list[str] = []
    position = 0
    for size in cuts:
        released += coalescer.push(text[position : position + size], 0.0)
        position += size
    released += coalescer.push(text[position:], 0.0)
    released += coalescer.flush()
    assert_whole_clusters(text, released)


def test_the_reported_thai_run_is_cut_between_clusters() -> None:
    """408 characters of Thai with no break: the long-run cut used to tear a tone mark."""
    text = "กั่" * 136  # consonant, vowel sign, tone mark: 408 code points, no break
    coalescer = Coalescer("th", max_chars=250)
    released = coalescer.push(text, 0.0) + coalescer.flush()
    assert len(released) >= 2
    assert_whole_clusters(text, released)
    assert "".join(released) == text


@settings(max_examples=examples(120), deadline=None)
@given(text=texts(), bound=st.integers(min_value=8, max_value=400))
def test_universal_agent_api_splitting_and_message_cuts_keep_clusters(
    text: str, bound: int
) -> None:
    pieces = split_text(text, bound)
    assert "".join(pieces) == text
    assert_whole_clusters(text, pieces)
    for piece in pieces:
        # A piece is over the bound only when it is one cluster bigger than the bound.
        assert len(piece.encode()) <= bound or len(graphemes(piece)) == 1
    assert_whole_clusters(text, [cut_utf8(text, bound)])


@settings(max_examples=examples(120), deadline=None)
@given(text=texts(), limit=st.integers(min_value=4, max_value=300))
def test_spoken_values_are_clipped_between_clusters(text: str, limit: int) -> None:
    clipped = clip(text, limit)
    body = clipped.removesuffix("…").rstrip(" ,;:")
    # clip folds runs of white space; the generated texts have single spaces only.
    assert_whole_clusters(text, [body] if body else [])


@settings(max_examples=examples(60), deadline=None)
@given(text=texts(max_words=400), max_chars=st.integers(min_value=40, max_value=300))
def test_shortened_speech_ends_between_clusters(text: str, max_chars: int) -> None:
    whole = clean_for_speech(text, "th", max_chars=10 * len(text))
    spoken = clean_for_speech(text, "th", max_chars=max_chars)
    if len(whole) > max_chars:
        body = spoken[: spoken.rfind(" (")].rstrip(" ,;:")
        assert_whole_clusters(whole, [body])


def test_output_held_in_low_load_mode_keeps_whole_clusters() -> None:
    """Low cognitive load holds a whole output; what passes the hold bound is cut cleanly."""
    piece = "ก่" * 1500 + "ข"  # 3,001 code points, so the bound falls inside a cluster
    chunks = (HELD_OUTPUT_LIMIT // len(piece)) + 2
    streams = OutputStreams()
    released: list[str] = []
    for index in range(chunks):
        raw = frame(
            "agent.output.streaming",
            output_id="out_1",
            chunk=piece,
            position=index,
            complete=index == chunks - 1,
        )
        event = decode_frame(raw).event
        assert isinstance(event, OutputStreaming), decode_frame(raw).diagnostics
        released += [
            r.text for r in streams.feed(event, "src", "th", 0.0, hold_until_complete=True)
        ]
    text = piece * chunks
    assert released
    assert_whole_clusters(text, released)
    assert sum(len(r) for r in released) <= HELD_OUTPUT_LIMIT
    assert streams.truncated_chars == len(text) - sum(len(r) for r in released)
