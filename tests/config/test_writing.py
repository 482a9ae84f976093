"""Write-back keeps comments and layout, validates first, and never clobbers a broken file."""

from __future__ import annotations

from pathlib import Path

import pytest

from announcer.config import (
    ConfigError,
    ensure_file,
    load_config,
    reset_file,
    save_setting,
    save_settings,
)
from announcer.config.template import TEMPLATE
from announcer.engine.settings import SavedProducer, UserSettings

USER_FILE = """\
# Ada's settings -- keep these notes!
verbosity = "detailed"   # long form while I learn the tool

# Yoruba first, then English
languages = ["yo-NG", "en"]

[voices]
# espeak-ng's Yoruba voice is rough; trying the other one
yo = "yoruba"  # check again in March

[producers.build-bot]
source = "ws://127.0.0.1:8765"
token_env = "BUILD_BOT_TOKEN"  # set in ~/.profile
"""


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(USER_FILE, encoding="utf-8")
    return path


def test_changing_a_value_keeps_every_comment(user_file: Path) -> None:
    save_setting("verbosity", "terse", user_file)
    text = user_file.read_text("utf-8")
    assert text == USER_FILE.replace(
        'verbosity = "detailed"   # long form', 'verbosity = "terse"   # long form'
    )
    assert load_config(user_file, env={}).settings.verbosity == "terse"


def test_nested_values_go_into_their_table_next_to_the_comments(user_file: Path) -> None:
    save_setting("voices.ar", "arabic", user_file)
    save_setting("voices.yo", "yoruba+f3", user_file)
    text = user_file.read_text("utf-8")
    assert "# espeak-ng's Yoruba voice is rough; trying the other one\n" in text
    assert 'yo = "yoruba+f3"  # check again in March\n' in text
    settings = load_config(user_file, env={}).settings
    assert settings.voices == {"yo": "yoruba+f3", "ar": "arabic"}
    assert text.index('ar = "arabic"') < text.index("[producers.build-bot]")


def test_new_top_level_keys_land_before_the_tables(user_file: Path) -> None:
    save_setting("pace_wpm", 140, user_file)
    text = user_file.read_text("utf-8")
    assert text.index("pace_wpm = 140") < text.index("[voices]")
    assert load_config(user_file, env={}).settings.pace_wpm == 140


def test_none_removes_the_key_so_the_default_returns(user_file: Path) -> None:
    save_setting("verbosity", None, user_file)
    lines = user_file.read_text("utf-8").splitlines()
    assert not [line for line in lines if line.startswith("verbosity")]
    assert "# Ada's settings -- keep these notes!" in lines
    assert load_config(user_file, env={}).settings.verbosity == "normal"
    save_setting("voices.nothing", None, user_file)  # removing what is not there is fine


def test_invalid_values_are_refused_before_anything_is_written(user_file: Path) -> None:
    with pytest.raises(ConfigError, match="setting 'verbosity'"):
        save_setting("verbosity", "loud", user_file)
    with pytest.raises(ConfigError, match="'earcon' is not a setting; did you mean 'earcons'"):
        save_setting("earcon", False, user_file)
    with pytest.raises(ConfigError, match="not a BCP 47 language tag"):
        save_setting("languages", ["yo", "Yoruba please"], user_file)
    with pytest.raises(ConfigError, match="reply_policy"):
        save_setting("reply_policy", "auto_accept", user_file)
    assert user_file.read_text("utf-8") == USER_FILE


def test_a_broken_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    broken = 'verbosity = "terse"\npitch = = 3\n'
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"not valid TOML.*nothing was written"):
        save_setting("verbosity", "normal", path)
    assert path.read_text("utf-8") == broken


def test_first_save_starts_from_the_documented_template(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.toml"
    save_setting("verbosity", "terse", path)
    text = path.read_text("utf-8")
    assert "# How much to say:" in text
    # The value sits right under its documentation.
    assert '# verbosity = "normal"\nverbosity = "terse"\n' in text
    loaded = load_config(path, env={})
    assert loaded.problems == [] and loaded.settings.verbosity == "terse"


def test_languages_are_stored_normalised(user_file: Path) -> None:
    save_setting("languages", ["ar_sa", "EN"], user_file)
    assert 'languages = ["ar-SA", "en"]' in user_file.read_text("utf-8")


def test_saving_a_producer(user_file: Path) -> None:
    save_setting("producers.tutor", SavedProducer(source="unix:/run/tutor.sock"), user_file)
    settings = load_config(user_file, env={}).settings
    assert settings.producers["tutor"].source == "unix:/run/tutor.sock"
    assert settings.producers["build-bot"].token_env == "BUILD_BOT_TOKEN"
    assert "# set in ~/.profile" in user_file.read_text("utf-8")


def test_save_settings_writes_only_what_the_user_changed(user_file: Path) -> None:
    # Values from flags or the environment are in force but must not become permanent.
    in_force = load_config(user_file, env={"ANNOUNCER_BACKEND": "jsonl"}).settings
    assert in_force.backend == "jsonl"
    changed = in_force.model_copy(update={"cognitive_load": "low", "earcons": False})
    written = save_settings(changed, user_file, base=in_force)
    assert sorted(written) == ["cognitive_load", "earcons"]
    text = user_file.read_text("utf-8")
    assert "backend" not in text
    assert "# long form while I learn the tool" in text
    after = load_config(user_file, env={}).settings
    assert (after.cognitive_load, after.earcons, after.verbosity) == ("low", False, "detailed")


def test_save_settings_round_trip_restart(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    wanted = UserSettings(
        verbosity="terse",
        languages=["ar", "en"],
        voices={"ar": "arabic"},
        pitch=0.3,
        filters={"include": ["aaep:agent.*"], "exclude": ["aaep:agent.progress.updated"]},
        producers={"bot": SavedProducer(source="ws://127.0.0.1:1", token_env="BOT_TOKEN")},
        max_events_per_second=2.5,
    )
    save_settings(wanted, path)
    loaded = load_config(path, env={})
    assert loaded.problems == []
    assert loaded.settings == wanted
    # Setting an optional value back to unset removes it from the file.
    save_settings(wanted.model_copy(update={"pitch": None}), path)
    assert load_config(path, env={}).settings.pitch is None


def test_ensure_and_reset(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    assert ensure_file(path) == path and path.read_text("utf-8") == TEMPLATE
    save_setting("verbosity", "terse", path)
    edited = path.read_text("utf-8")
    ensure_file(path)
    assert path.read_text("utf-8") == edited
    backup = reset_file(path)
    assert backup is not None and backup.read_text("utf-8") == edited
    assert path.read_text("utf-8") == TEMPLATE
    assert reset_file(tmp_path / "other.toml") is None


def test_settings_store_saves_only_what_the_user_changed_and_survives_restart(
    user_file: Path,
) -> None:
    from announcer.config import SettingsStore

    said: list[str] = []
    store = SettingsStore.load(
        user_file,
        env={"ANNOUNCER_BACKEND": "jsonl"},
        flags={"verbosity": "terse"},
        report=said.append,
    )
    assert said == []
    assert (store.settings.backend, store.settings.verbosity) == ("jsonl", "terse")
    # The user turns earcons off and picks a Yoruba voice on the settings screen.
    changed = store.settings.model_copy(
        update={"earcons": False, "voices": {**store.settings.voices, "yo": "yoruba+m2"}}
    )
    assert sorted(store.save(changed)) == ["earcons", "voices"]
    assert store.save(changed) == []  # nothing new to write
    # Restart without the flag and the variable: the user's choices are kept, the run's are not.
    restarted = SettingsStore.load(user_file, env={})
    s = restarted.settings
    assert (s.earcons, s.voices["yo"], s.verbosity, s.backend) == (
        False,
        "yoruba+m2",
        "detailed",
        "auto",
    )
    assert "# check again in March" in user_file.read_text("utf-8")
