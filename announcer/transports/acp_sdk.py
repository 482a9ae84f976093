"""The ACP SDK (``acp``), imported once without reading its models' field docstrings.

The SDK's schema models ask pydantic for ``use_attribute_docstrings``: while building
its ~270 models, pydantic reads the source again to find each field's docstring, for
descriptions that only a JSON Schema export shows. That is ~180 ms of CPU, over 40%
of importing the SDK, at every ``announcer agent`` start; announcer exports no schema
and validates the same with or without the descriptions. The skip lasts only while
``acp`` is first imported (the import lock holds it), and only if pydantic still has
the step under that name; otherwise the SDK is imported as is.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

DOCSTRING_STEP = "_update_fields_from_docstrings"


def _no_docstrings(*_args: Any, **_kwargs: Any) -> None:
    return None


def import_acp() -> ModuleType:
    """``acp``, imported now if it was not yet (see the module's docstring)."""
    already = sys.modules.get("acp")
    if already is not None:
        return already
    try:
        from pydantic._internal import _fields
    except ImportError:  # another pydantic: the SDK as is
        return importlib.import_module("acp")
    step = getattr(_fields, DOCSTRING_STEP, None)
    if step is None:
        return importlib.import_module("acp")
    setattr(_fields, DOCSTRING_STEP, _no_docstrings)
    try:
        return importlib.import_module("acp")
    finally:
        setattr(_fields, DOCSTRING_STEP, step)
