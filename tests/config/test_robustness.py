"""Nothing in a settings file, the environment or the flags can stop start-up."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from announcer.config import load_config
from announcer.engine.settings import UserSettings
from tests.support.examples import examples

KEYS = [*UserSettings.model_fields, "voices.yo", "filters.exclude", "producers.x.source", "bogus"]
VALUES = st.one_of(
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.text(max_size=12),
    st.lists(st.text(max_size=6), max_size=3),
)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_any_text_as_a_settings_file_loads(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.toml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        loaded = load_config(path, env={})
    assert isinstance(loaded.settings, UserSettings)


@settings(max_examples=examples(150), deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6))
def test_any_typed_values_load_and_every_rejection_is_reported(values: dict[str, object]) -> None:
    lines = [f"{key} = {_toml_value(value)}" for key, value in values.items()]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        loaded = load_config(path, env={})
    for problem in loaded.problems:
        assert problem.describe()  # a sentence, in English here


@settings(max_examples=examples(100), deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [f"ANNOUNCER_{k.upper()}" for k in UserSettings.model_fields]
            + ["ANNOUNCER_FILTERS_EXCLUDE", "LANG", "LANGUAGE"]
        ),
        st.text(max_size=20).filter(lambda s: "\x00" not in s),
        max_size=6,
    )
)
def test_any_environment_loads(env: dict[str, str]) -> None:
    loaded = load_config(Path("/nonexistent/announcer.toml"), env=env)
    assert isinstance(loaded.settings, UserSettings)
