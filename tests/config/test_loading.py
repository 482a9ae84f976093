"""Precedence (flags > env > file > defaults) and problems that name file, line and field."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from announcer.config import (
    add_settings_flags,
    config_path,
    find_producer,
    flags_from_args,
    load_config,
    load_settings,
    system_languages,
)
from announcer.config.loader import locate_key
from announcer.config.template import TEMPLATE
from announcer.engine.settings import UserSettings

NO_ENV: dict[str, str] = {}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_gives_defaults(tmp_path: Path) -> None:
    loaded = load_config(tmp_path / "missing.toml", env=NO_ENV)
    assert loaded.settings == UserSettings()
    assert loaded.problems == []


def test_the_documented_template_is_valid_and_changes_nothing(tmp_path: Path) -> None:
    loaded = load_config(write(tmp_path, TEMPLATE), env=NO_ENV)
    assert loaded.problems == []
    assert loaded.settings == UserSettings()


def test_every_setting_is_documented_in_the_template_and_the_docs() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text("utf-8")
    for name in UserSettings.model_fields:
        assert f"{name}" in TEMPLATE, name
        assert f"`{name}`" in docs, name


def test_precedence_flags_over_env_over_file_over_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, 'verbosity = "detailed"\ncognitive_load = "low"\npace_wpm = 150\n')
    env = {"ANNOUNCER_VERBOSITY": "normal", "ANNOUNCER_COGNITIVE_LOAD": "high"}
    loaded = load_config(path, env=env, flags={"verbosity": "terse"})
    s = loaded.settings
    assert (s.verbosity, s.cognitive_load, s.pace_wpm, s.backend) == ("terse", "high", 150, "auto")
    assert loaded.sources["verbosity"] == "--verbosity"
    assert loaded.sources["cognitive_load"] == "ANNOUNCER_COGNITIVE_LOAD"
    assert loaded.sources["pace_wpm"] == "config.toml line 3"
    assert "backend" not in loaded.sources


def test_env_values_are_typed_like_the_fields(tmp_path: Path) -> None:
    env = {
        "ANNOUNCER_LANGUAGES": "yo-NG, en",
        "ANNOUNCER_EARCONS": "off",
        "ANNOUNCER_PITCH": "0.25",
        "ANNOUNCER_MAX_EVENTS_PER_SECOND": "none",
        "ANNOUNCER_VOICES": "yo=yoruba, ar=arabic",
        "ANNOUNCER_FILTERS_EXCLUDE": "aaep:agent.output.streaming",
        "ANNOUNCER_MUTED_PRODUCERS": "noisy-bot",
    }
    path = write(tmp_path, 'max_events_per_second = 3.0\n[filters]\ninclude = ["aaep:agent.*"]\n')
    s = load_config(path, env=env).settings
    assert s.languages == ["yo-NG", "en"]
    assert s.earcons is False
    assert s.pitch == 0.25
    assert s.max_events_per_second is None
    assert s.voices == {"yo": "yoruba", "ar": "arabic"}
    # Nested settings merge: the file's include survives the environment's exclude.
    assert s.filters.include == ["aaep:agent.*"]
    assert s.filters.exclude == ["aaep:agent.output.streaming"]
    assert s.muted_producers == ["noisy-bot"]


def test_file_voices_merge_with_env_voices(tmp_path: Path) -> None:
    path = write(tmp_path, '[voices]\nyo = "yoruba"\nes = "spanish"\n')
    s = load_config(path, env={"ANNOUNCER_VOICES": "es=spanish-latin-am"}).settings
    assert s.voices == {"yo": "yoruba", "es": "spanish-latin-am"}


def test_languages_come_from_the_system_locale_when_unset(tmp_path: Path) -> None:
    env = {"LANG": "es_MX.UTF-8", "LANGUAGE": "yo_NG:es_MX:en"}
    loaded = load_config(tmp_path / "none.toml", env=env)
    assert loaded.settings.languages == ["yo-NG", "es-MX", "en"]
    assert loaded.sources["languages"] == "system locale"
    assert system_languages({"LANG": "C.UTF-8", "LANGUAGE": "fr"}) == []
    assert system_languages({"LC_ALL": "pt_BR.UTF-8@latin"}) == ["pt-BR"]
    file_wins = load_config(write(tmp_path, 'languages = ["ar"]\n'), env=env)
    assert file_wins.settings.languages == ["ar"]


def test_language_tags_are_normalised_and_bad_ones_reported(tmp_path: Path) -> None:
    path = write(tmp_path, '# mine\nlanguages = ["PT_br", "not a tag!", "en"]\n')
    loaded = load_config(path, env=NO_ENV)
    assert loaded.settings.languages == ["pt-BR", "en"]
    [problem] = loaded.problems
    assert problem.location == f"{path}, line 2"
    assert problem.field == "languages"
    assert "'not a tag!' is not a BCP 47 language tag" in problem.describe()


def test_a_bad_value_names_file_line_and_field_and_keeps_the_rest(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '# my settings\nverbosity = "loud"  # I like it loud\npace_wpm = 150\nrate_wpm = 2000\n',
    )
    loaded = load_config(path, env=NO_ENV)
    assert loaded.settings.verbosity == "normal"
    assert loaded.settings.pace_wpm == 150
    assert loaded.settings.rate_wpm is None
    messages = [p.describe() for p in loaded.problems]
    assert messages[0] == (
        f"{path}, line 2: setting 'verbosity': Input should be 'terse', 'normal' or 'detailed' "
        "(got 'loud'). Using 'normal' instead."
    )
    assert messages[1].startswith(f"{path}, line 4: setting 'rate_wpm': Input should be less than")


def test_unknown_settings_are_reported_with_a_suggestion(tmp_path: Path) -> None:
    path = write(tmp_path, "earcon = false\n[filters]\nexclued = []\n")
    loaded = load_config(path, env=NO_ENV)
    described = [p.describe() for p in loaded.problems]
    assert (
        f"{path}, line 1: setting 'earcon': unknown setting (did you mean 'earcons'?)"
        in (described[0])
    )
    assert (
        f"{path}, line 3: setting 'filters.exclued': unknown setting (did you mean "
        in (described[1])
    )
    assert "'exclude'?)" in described[1]
    assert loaded.settings.earcons is True


def test_broken_toml_lines_are_skipped_and_the_rest_still_counts(tmp_path: Path) -> None:
    path = write(tmp_path, 'verbosity = "terse"\npitch = = 3\nvolume = 0.5\nbackend = "text\n')
    loaded = load_config(path, env=NO_ENV)
    assert loaded.settings.verbosity == "terse"
    assert loaded.settings.volume == 0.5
    assert loaded.settings.backend == "auto"
    lines = [p.location for p in loaded.problems]
    assert lines == [f"{path}, line 2", f"{path}, line 4"]
    assert all("not valid TOML" in p.message for p in loaded.problems)
    assert loaded.problems[0].field == "pitch"


def test_a_file_that_is_not_utf8_is_ignored_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'verbosity = "t\xe9rse"\n')
    loaded = load_config(path, env=NO_ENV)
    assert loaded.settings == UserSettings()
    assert "not UTF-8" in loaded.problems[0].describe()


def test_bad_env_and_flag_values_fall_back_to_the_layer_below(tmp_path: Path) -> None:
    path = write(tmp_path, "pace_wpm = 150\nvolume = 0.4\n")
    loaded = load_config(path, env={"ANNOUNCER_PACE_WPM": "fast"}, flags={"volume": 7.0})
    assert loaded.settings.pace_wpm == 150
    assert loaded.settings.volume == 0.4
    described = [p.describe() for p in loaded.problems]
    assert described[0].startswith("ANNOUNCER_PACE_WPM: setting 'pace_wpm': Input should be")
    assert described[0].endswith("Using 150 instead.")
    assert described[1].startswith("--volume: setting 'volume': Input should be less than")


def test_saved_producers(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[producers.build-bot]\nsource = "ws://127.0.0.1:8765"\ntoken_env = "BUILD_BOT_TOKEN"\n\n'
        '[producers.broken]\ntoken_env = "X"\n',
    )
    loaded = load_config(path, env=NO_ENV)
    bot = find_producer(loaded.settings, "Build-Bot")
    assert bot is not None and bot.source == "ws://127.0.0.1:8765"
    assert bot.token_env == "BUILD_BOT_TOKEN"
    assert find_producer(loaded.settings, "broken") is None
    [problem] = loaded.problems
    assert problem.field == "producers.broken.source"
    assert problem.location == f"{path}, line 5"
    assert "[producers.broken] is ignored" in problem.describe()


def test_listen_name_resolves_to_a_saved_producer(tmp_path: Path) -> None:
    from announcer.config import resolve_source

    path = write(
        tmp_path, '[producers.tutor]\nsource = "unix:/run/tutor.sock"\ntoken_env = "TUTOR_TOKEN"\n'
    )
    settings = load_config(path, env=NO_ENV).settings
    assert resolve_source("Tutor", settings) == ("unix:/run/tutor.sock", "TUTOR_TOKEN")
    assert resolve_source("ws://127.0.0.1:9", settings) == ("ws://127.0.0.1:9", None)
    assert resolve_source(str(path), settings) == (str(path), None)


def test_reply_policy_can_never_be_accept(tmp_path: Path) -> None:
    loaded = load_config(write(tmp_path, 'reply_policy = "auto_accept"\n'), env=NO_ENV)
    assert loaded.settings.reply_policy == "ask"
    assert loaded.problems[0].field == "reply_policy"


def test_argparse_flags_round_trip(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_settings_flags(parser)
    args = parser.parse_args(
        [
            "--language",
            "es,en",
            "--voice",
            "es=spanish",
            "--voice",
            "yo=yoruba",
            "--no-earcons",
            "--rate",
            "200",
            "--config",
            str(tmp_path / "c.toml"),
        ]
    )
    flags = flags_from_args(args)
    assert flags == {
        "language": ["es", "en"],  # split and checked by the shared --language parser
        "voice": ["es=spanish", "yo=yoruba"],
        "earcons": False,
        "rate": 200,
    }
    s = load_settings(args.config, env=NO_ENV, flags=flags, report=None)
    assert s.languages == ["es", "en"]
    assert s.voices == {"es": "spanish", "yo": "yoruba"}
    assert (s.earcons, s.rate_wpm) == (False, 200)


def test_add_settings_flags_leaves_a_commands_own_flags_alone() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--language", default="mine")
    add_settings_flags(parser)
    assert parser.parse_args([]).language == "mine"


def test_load_settings_reports_in_the_users_language(tmp_path: Path) -> None:
    path = write(tmp_path, 'languages = ["es"]\nverbosity = "loud"\n')
    said: list[str] = []
    settings = load_settings(path, env=NO_ENV, report=said.append)
    assert settings.verbosity == "normal"
    assert len(said) == 1 and "line 2" in said[0] and "'verbosity'" in said[0]
    assert said[0].endswith("Se usa 'normal' en su lugar.")  # Spanish, as the user asked


def test_config_path_honours_the_variable_and_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert config_path({"ANNOUNCER_CONFIG": "/tmp/x/settings.toml"}) == Path("/tmp/x/settings.toml")
    default = config_path({})
    assert default.name == "config.toml" and default.parent.name == "announcer"


def test_locate_key_finds_tables_dotted_and_inline_keys() -> None:
    lines = [
        "a = 1",
        "[voices]",
        'yo = "x"',
        '[producers."my bot"]',
        'source = "s"',
        'filters.include = ["*"]',
    ]
    assert locate_key(lines, ("voices", "yo")) == 3
    assert locate_key(lines, ("producers", "my bot", "source")) == 5
    assert locate_key(lines, ("producers", "my bot")) == 4
    assert locate_key(lines, ("nothing",)) is None


def test_problem_details_are_translated_too(tmp_path: Path) -> None:
    path = write(tmp_path, 'languages = ["fr"]\nearcon = false\nrate_wpm = 5000\n')
    said: list[str] = []
    load_settings(path, env=NO_ENV, report=said.append)
    assert said[0] == (
        f"{path}, line 2 : réglage 'earcon' : réglage inconnu (vouliez-vous dire 'earcons' ?). "
        "Il est ignoré."
    )
    assert said[1].endswith(
        "(reçu : 5000). Valeur utilisée à la place : le réglage par défaut du moteur."
    )
