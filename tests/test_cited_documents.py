"""Every document the code and the docs cite exists, and docs/security.md stays true.

A docstring that sends the reader to a file that is not in the repository (a note, a
brief, the documents the product was first made from) is a dead end: the rule it
points at must be written where the reader can find it (docs/security.md for the
security rules). docs/security.md in turn names the module that enforces each rule and
the tests that prove it; each must exist.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECURITY = ROOT / "docs" / "security.md"

# what cites documents: the package's docstrings and comments, the docs, the readme and
# the project file
CITING = [
    *sorted((ROOT / "announcer").rglob("*.py")),
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "README.md",
    ROOT / "pyproject.toml",
]
# a file in the repository: docs/NAME.md, an upper-case NAME.md at the top, notes/...
CITED_FILE = re.compile(r"\b(?:docs/[\w.-]+\.md|[A-Z][A-Z_]{2,}\.md|notes/[\w./-]+\.md)")
# documents outside the repository, cited by a name a reader cannot open
NOT_IN_THE_REPOSITORY = re.compile(
    r"\bBRIEF\b|\b(?i:the seed(?:'s)?|seed (?:document|chapter)s?)\b"
)


def test_every_cited_document_is_in_the_repository() -> None:
    missing = []
    for path in CITING:
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{number}"
            missing += [
                f"{where} {name}" for name in CITED_FILE.findall(line) if not (ROOT / name).exists()
            ]
            missing += [f"{where} {m.group()!r}" for m in NOT_IN_THE_REPOSITORY.finditer(line)]
    assert not missing, "cited but not in the repository: " + "; ".join(missing)


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def test_the_security_rules_name_modules_and_tests_that_exist() -> None:
    text = SECURITY.read_text(encoding="utf-8")
    proofs = re.findall(r"`(tests/[\w/]+\.py)` :: `(\w+)`", text)
    modules = set(re.findall(r"`(announcer/[\w/]+\.py)`", text))
    assert len(proofs) >= 10 and len(modules) >= 10  # the patterns still read the file
    for module in modules:
        assert (ROOT / module).is_file(), module
    for test_file, name in proofs:
        assert (ROOT / test_file).is_file(), test_file
        assert name in _test_names(ROOT / test_file), f"{test_file} :: {name}"


def test_every_security_rule_has_an_enforcing_module_and_a_proof() -> None:
    sections = re.split(r"^## ", SECURITY.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]
    assert len(sections) >= 8
    for section in sections:
        title = section.splitlines()[0]
        assert "Enforced by: `announcer/" in section, title
        assert re.search(r"Proved by:\n  - `tests/", section), title
