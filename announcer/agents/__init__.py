"""The ACP agents announcer knows by name: one TOML file each (``claude.toml`` ...).

Data only; :mod:`announcer.config.agents` reads and validates them. A new preset is a
new file here (tests/config/test_agent_files.py checks every file and every name).
"""
