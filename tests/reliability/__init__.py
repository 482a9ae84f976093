"""Hostile producers on loopback: floods, odd but lawful input, diagnostics (issue 13)."""
