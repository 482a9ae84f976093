"""Reconnection delays; the rule lives in the core (:mod:`announcer.engine.reconnect`)."""

from __future__ import annotations

from announcer.engine.reconnect import Backoff

__all__ = ["Backoff"]
