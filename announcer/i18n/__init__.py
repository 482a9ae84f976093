"""Internationalisation core (AAEP chapter 11): pure functions, no I/O beyond reading catalogs.

- ``negotiate``: which language to present (§11.1.3), per-field variants (§11.5.1),
  streaming chunks (§11.5.3).
- ``translate``: gettext catalogs for the product's own phrases.
- ``format``: numbers, percentages, durations, dates and lists with babel.
- ``text``: NFC comparison, grapheme-safe truncation, text direction (§11.3, §11.4).
- ``notices``: telling the user once when a language cannot be served.
"""
