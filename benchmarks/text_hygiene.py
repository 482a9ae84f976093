"""Text hygiene: the engine's clean_for_speech against its peers, in the same run.

- ``ours``: announcer/engine/text_hygiene.py (markdown-it-py behind plain-text fast paths),
- ``regex``: the hand-written regex version it replaced (benchmarks/_regex_hygiene.py),
- ``mistune``: mistune 3's AST rendered by the same rules (headings and paragraphs end as
  sentences, list items read with pauses, code fences described, links read by their
  text, images by their alt, URLs by their host, HTML kept literal) behind the same
  fast path and terminal-escape stripping, so only the parser differs.

Input classes, timed per call (best of three rounds):
- ``summary``: short plain agent sentences (the hot path; a few carry a URL),
- ``markdown``: agent answers with headings, lists, code, links and tables,
- ``real``: every markdown-bearing text in the shared peer samples (ACP schema
  descriptions, Codex reasoning, AEP mapping notes),
- ``tricky``: the hand-checked cases in tests/engine/data/hygiene_cases.json, which
  also give ``<impl>_wrong`` (outputs that differ from the expected text) and
  ``<impl>_wrong_cases`` (their names).
``us_per_call_summary_no_fast_path`` times the two parsers on the summaries with no
fast path in front.

Prints one JSON line. Run: ``/work/venv/bin/python benchmarks/text_hygiene.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _regex_hygiene
import markdown_it
import mistune
from _prose import prose

from announcer.engine import text_hygiene
from announcer.engine.text_hygiene import (
    clean_for_speech,
    describe_code_block,
    strip_terminal_codes,
)

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "engine" / "data" / "hygiene_cases.json"
PEERS = Path(os.environ.get("ANNOUNCER_SHARED", "/work/shared")) / "peers"
_UNICODE_BULLET = re.compile(r"(?m)^([ \t]*)•[ \t]+")
Block = tuple[str, str]  # (kind, text), kinds as in text_hygiene._join


def _with_fast_path(parse: Callable[[str, str], str]) -> Callable[[str, str], str]:
    def clean(text: str, language: str = "en") -> str:
        if text_hygiene._NEEDS_WORK.search(text) is None:
            return text_hygiene._plain(text)
        return parse(text, language)

    return clean


def markdown_it_parse(text: str, language: str = "en") -> str:
    """Ours with no fast path: every text goes through markdown-it-py."""
    return text_hygiene._render(strip_terminal_codes(text), language)


# --- mistune ----------------------------------------------------------------------------

_MISTUNE = mistune.create_markdown(renderer=None, plugins=["table", "strikethrough"])


def _mi_inline(nodes: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for node in nodes:
        kind = node["type"]
        if kind == "text":
            parts.append(text_hygiene._shorten_urls(node["raw"]))
        elif kind in ("codespan", "inline_html"):
            parts.append(node["raw"])
        elif kind in ("softbreak", "linebreak"):
            parts.append(" ")
        elif kind == "image":
            alt = _mi_inline(node.get("children", []))
            if alt.strip():
                parts.append(f"image: {alt}")
        elif "children" in node:
            parts.append(_mi_inline(node["children"]))
    return "".join(parts)


def _mi_blocks(nodes: list[dict[str, Any]], blocks: list[Block], language: str) -> None:
    for node in nodes:
        kind = node["type"]
        if kind == "paragraph" or kind == "block_text":
            blocks.append(("paragraph", _mi_inline(node["children"])))
        elif kind == "heading":
            blocks.append(("heading", _mi_inline(node["children"])))
        elif kind == "block_code":
            info = (node.get("attrs") or {}).get("info") or ""
            tag = info.split()[0] if info.strip() else ""
            blocks.append(("code", describe_code_block(node["raw"], tag, language)))
        elif kind == "block_html":
            blocks.append(("paragraph", node["raw"]))
        elif kind == "list":
            attrs = node.get("attrs") or {}
            number = int(attrs.get("start") or 1)
            for item in node["children"]:
                inner: list[Block] = []
                _mi_blocks(item.get("children", []), inner, language)
                prefix = f"{number}: " if attrs.get("ordered") else ""
                for index, (inner_kind, inner_text) in enumerate(inner):
                    if inner_kind == "paragraph":
                        blocks.append(("item", (prefix if index == 0 else "") + inner_text))
                    else:
                        blocks.append((inner_kind, inner_text))
                number += 1
        elif kind == "table":
            for part in node["children"]:
                rows = [part] if part["type"] == "table_head" else part["children"]
                for row in rows:
                    cells = [_mi_inline(cell["children"]) for cell in row["children"]]
                    blocks.append(("row", ", ".join(cell for cell in cells if cell.strip())))
        elif kind == "block_quote":
            _mi_blocks(node["children"], blocks, language)


def mistune_parse(text: str, language: str = "en") -> str:
    text = _UNICODE_BULLET.sub(r"\1- ", strip_terminal_codes(text))
    blocks: list[Block] = []
    _mi_blocks(_MISTUNE(text), blocks, language)  # type: ignore[arg-type]
    return text_hygiene._join([(k, " ".join(t.split())) for k, t in blocks])


IMPLEMENTATIONS: dict[str, Callable[[str, str], str]] = {
    "ours": lambda text, language="en": clean_for_speech(text, language),
    "regex": lambda text, language="en": _regex_hygiene.clean_for_speech(text, language),
    "mistune": _with_fast_path(mistune_parse),
}


# --- inputs -----------------------------------------------------------------------------


def summaries(count: int) -> list[str]:
    sentences = re.findall(r"[^\n]+?[.!?](?= |$)", prose(count * 120))
    sentences = [s.strip() for s in sentences if not s.lstrip().startswith("-")]
    rng = random.Random(3)
    return [" ".join(rng.sample(sentences, rng.randint(1, 2))) for _ in range(count)]


_ANSWERS = [
    "## Summary\nI moved **{n} files** into `archive/` and updated the index.\n\n"
    "### What changed\n- `notes.txt` was renamed to `notes_{n}.txt`\n"
    "- the *old* drafts were deleted\n"
    "- see [the log](https://ci.example.com/runs/{n}?tab=log) for details\n",
    "Here is the fix:\n\n```python\ndef total(rows):\n    return sum(r.amount for r in rows)\n"
    "\nprint(total(rows))\n```\n\nRun it with `python fix_{n}.py`, then check https://example.com/report/{n}.",
    "| Account | Balance |\n|---|---:|\n| Checking | ${n}.00 |\n| Savings | 1,200.50 |\n\n"
    "Both balances are **up to date** as of 9 a.m.",
    "Steps to finish:\n1. Open the settings\n2. Choose *Privacy*\n3. Turn off `share_usage_data`\n"
    "4. Restart the app\n\n> Note: this needs an admin password.",
    "The build **failed** on step {n}:\n\n"
    "```\nerror[E0308]: mismatched types\n  --> src/main.rs:4:5\n```\n\n"
    "I think the fix is to change `let x: u32` to `let x: u64`. Want me to try?",
]


def markdown_answers(count: int) -> list[str]:
    return [_ANSWERS[i % len(_ANSWERS)].format(n=i) for i in range(count)]


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def real_texts() -> list[str]:
    markdown = re.compile(r"\*\*|```|`|\]\(|\]\[|^\s*(?:[-*]|\d+\.) |^#", re.M)
    found: list[str] = []
    for path in sorted(PEERS.rglob("*.json*")):
        lines = [path.read_text()] if path.suffix == ".json" else path.read_text().splitlines()
        for line in lines:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            found.extend(s for s in _strings(value) if len(s) > 10 and markdown.search(s))
    return list(dict.fromkeys(found))


# --- measuring --------------------------------------------------------------------------


def micros_per_call(clean: Callable[[str, str], str], texts: list[str], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for text in texts:
            clean(text, "en")
        best = min(best, time.perf_counter() - started)
    return round(best / len(texts) * 1e6, 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=5_000, help="texts per input class")
    args = parser.parse_args()
    cases = json.loads(CASES.read_text())
    real = real_texts()
    classes = {
        "summary": summaries(args.calls),
        "markdown": markdown_answers(args.calls),
        "real": (real * (args.calls // max(len(real), 1) + 1))[: args.calls],
        "tricky": [case["text"] for case in cases] * (args.calls // len(cases) + 1),
    }
    result: dict[str, object] = {
        "benchmark": "text_hygiene",
        "markdown_it_py": markdown_it.__version__,
        "mistune": mistune.__version__,
        "real_texts": len(real),
        "tricky_cases": len(cases),
    }
    for name, clean in IMPLEMENTATIONS.items():
        wrong = [case["name"] for case in cases if clean(case["text"], "en") != case["expected"]]
        result[f"{name}_wrong"] = len(wrong)
        result[f"{name}_wrong_cases"] = wrong
    for class_name, texts in classes.items():
        result[f"us_per_call_{class_name}"] = {
            name: micros_per_call(clean, texts) for name, clean in IMPLEMENTATIONS.items()
        }
    result["us_per_call_summary_no_fast_path"] = {
        "ours": micros_per_call(markdown_it_parse, classes["summary"]),
        "mistune": micros_per_call(mistune_parse, classes["summary"]),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
