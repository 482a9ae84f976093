"""announcer.transports.acp_sdk: the ACP SDK imported without its field docstrings is the
same SDK: every schema model has the same JSON Schema but for descriptions, and pydantic
reads docstrings again for every model built afterwards.

Each side runs in a fresh interpreter (a module is imported once per process), from a
file: pydantic reads a docstring from the class's source.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCHEMAS = """
import json, sys
if sys.argv[1] == "quick":
    from announcer.transports.acp_sdk import import_acp
    import_acp()
import acp
import acp.schema
from pydantic import BaseModel, ConfigDict

def without_descriptions(value):
    if isinstance(value, dict):
        return {k: without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [without_descriptions(v) for v in value]
    return value

models = {
    name: model
    for name, model in vars(acp.schema).items()
    if isinstance(model, type) and issubclass(model, BaseModel)
    and model.__module__ == acp.schema.__name__
}
schemas = {name: without_descriptions(m.model_json_schema()) for name, m in models.items()}
field = acp.schema.RequestPermissionResponse.model_fields["outcome"]

class Later(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)
    answer: str
    '''The user's answer.'''

json.dump(
    {
        "schemas": schemas,
        "outcome_description": field.description,
        "later_description": Later.model_fields["answer"].description,
    },
    sys.stdout,
    sort_keys=True,
)
"""


def sdk_as_imported(tmp_path: Path, how: str) -> dict[str, object]:
    script = tmp_path / "sdk_schemas.py"
    script.write_text(SCHEMAS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), how],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_quick_import_is_the_same_sdk_but_for_descriptions(tmp_path: Path) -> None:
    usual, quick = sdk_as_imported(tmp_path, "usual"), sdk_as_imported(tmp_path, "quick")
    assert len(usual["schemas"]) > 200  # type: ignore[arg-type]  # every schema model
    assert quick["schemas"] == usual["schemas"]
    assert usual["outcome_description"]  # the SDK documents its fields...
    assert quick["outcome_description"] is None  # ...which is what the quick import skips
    # pydantic's own step is back: a model built later still reads its docstrings
    assert quick["later_description"] == usual["later_description"] == "The user's answer."


def test_an_sdk_already_imported_is_returned_as_is() -> None:
    import acp

    from announcer.transports.acp_sdk import import_acp

    assert import_acp() is acp
