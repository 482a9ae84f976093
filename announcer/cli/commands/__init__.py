"""Subcommands: every module here with a ``register(subparsers)`` is discovered."""
