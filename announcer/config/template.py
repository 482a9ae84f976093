"""The settings file a new user starts from: every field, documented, defaults commented out.

Defaults stay commented so that a later release's better default reaches
users who never changed the field. docs/configuration.md says the same at length.
"""

from __future__ import annotations

TEMPLATE = """\
# announcer settings. Every line starting with # is a comment; remove the # in
# front of a setting to change it. Settings the screen in the app changes are
# written here too, and your comments are kept.
#
# Precedence: command-line flags win, then ANNOUNCER_* environment variables,
# then this file, then the built-in defaults. `announcer config show` prints
# what is in force and where each value came from.

# How much to say: "terse", "normal" or "detailed" (AAEP summary_terse/normal/detailed).
# verbosity = "normal"

# Cognitive load: "low" keeps announcements short and one at a time; "medium"; "high".
# cognitive_load = "medium"

# Languages you understand, most preferred first (BCP 47 tags such as "yo-NG",
# "es-419", "pt-BR", "ar"). Producers are asked for these, per-field variants are
# chosen from them, and announcer's own phrases use the first one it has a
# translation for. Unset: taken from your system's LANGUAGE / LANG, else English.
# languages = ["en"]

# Speech output (the --speech flag): "auto", "pyttsx3" (espeak-ng), "speechd",
# "screenreader", "text", "jsonl:PATH", "wav:DIR" or "none". "auto" picks the best one
# installed.
# backend = "auto"
# "screenreader:NAME" picks one: nvda, jaws, voiceover, orca, speechd, sapi, onecore.

# Braille through your screen reader: "auto" (when it has a braille display), "on" or
# "off". Questions are always brailled.
# braille = "auto"

# Speaking rate in words per minute (60-600); unset means the engine's default.
# rate_wpm = 180

# Pitch and volume from 0.0 to 1.0; unset means the engine's default.
# pitch = 0.5
# volume = 1.0

# Short sounds (earcons) before announcements of each kind.
# earcons = true

# true: only critical announcements interrupt speech; everything else waits.
# do_not_interrupt = false

# What happens to queued speech after a critical announcement interrupts it:
# "resume" says it afterwards, "drop" forgets it.
# after_interrupt = "resume"

# Words per minute you can follow; queued speech is paced and bounded with it (60-600).
# pace_wpm = 180

# The longest (1-60 seconds) news waits to be said while newer news waits; older news
# is skipped, said so, and kept in History. Questions are never skipped.
# max_news_delay_seconds = 3.0

# How much faster than your rate the agent's own words may be said when they pile up
# (1.0-3.0; they are never skipped, so a backlog is caught up by speaking faster).
# max_rate_factor = 1.5

# At most this many announcements a second (unset: no limit). Critical ones always pass.
# max_events_per_second = 4.0

# Producers whose announcements are muted (their producer name or id).
# muted_producers = []

# What happens when a confirmation arrives and you do not answer: "ask" keeps
# asking. "auto_reject" rejects it for you. announcer never accepts for you.
# reply_policy = "ask"

# Seconds an answer key waits after a question appears or replaces another, and until
# its first words were spoken, so a key meant for the last question never answers
# this one (0-10; 0 turns the wait off, which is not recommended).
# answer_arming_seconds = 1.0

# Which confirmations take two keys to accept (A, then Enter): "risky" (high-risk or
# irreversible ones, and any whose risk is not stated; low and medium risk take one key)
# or "always". Rejecting always takes one key.
# two_key_accept = "risky"

# Seconds between reminders that a question is still waiting, for agents that wait
# without a deadline (announcer agent); 0 turns the reminders off.
# question_reminder_seconds = 60.0

# While an agent works and nothing has been said for this many seconds, one short
# "Still working: ..." is said, with a quiet sound (0-3600; 0 turns it off).
# silence_notice_seconds = 30.0

# At the end of an agent's turn that lasted at least this many seconds, one digest of it:
# files changed, commands run, your answers, errors, its last words (0: only when you ask,
# with :digest).
# digest_after_seconds = 120.0

# An ACP agent registry that `announcer agent --list` and `announcer agent ID` use
# beside the presets: a registry.json file, a folder of agent.json files, or an https://
# address (for example the ACP registry's own registry.json).
# agent_registry = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"

# A voice per language: the language tag, then the voice name your speech
# engine knows (see `announcer voices`).
[voices]
# yo = "yoruba"
# ar = "ar"

# With several agents side by side, the voice each speaks with, by its short name;
# an agent left out gets an installed voice no other agent uses (see `announcer voices`).
[agent_voices]
# codex = "en-gb-x-rp"

# Which event types to announce, as shell-style patterns over AAEP types.
[filters]
# include = ["*"]
# exclude = ["aaep:agent.output.streaming"]

# Saved producers: `announcer listen NAME` connects to [producers.NAME].
# source is any SOURCE `announcer listen --help` lists: an address, a socket, a command,
# a recorded .jsonl file, or an ACP agent (acp:claude, also started by
# `announcer agent NAME`). token_env names the environment
# variable holding the access token (the token itself never goes in this file).
# [producers.build-bot]
# source = "wss://127.0.0.1:8765/aaep"
# token_env = "BUILD_BOT_TOKEN"
"""
