"""The agents announcer knows by name: one TOML file each (``claude.toml`` ...), and their reader.

A ground-floor package: it imports nothing of announcer's, so every layer can read it
(formats, transports, the CLI). ``files`` reads the files with the standard library
alone (the hook process must start fast); ``schema`` and ``catalogue`` validate them
with pydantic and answer the questions the other layers ask ("which agent prints this
stream?", "which agents have hooks?"). A new agent is a new file here; a new agent CLI
stream is its adapter in ``announcer/formats/cli_streams/`` plus the file's ``[cli]``
table (tests/agents/test_catalogue_names.py fails when a name has no file or no code).
This module imports nothing, so the hook process pays only for ``files``.
"""
