"""What differs between Linux, macOS and Windows, behind small functions.

Everything that needs a POSIX-only call (process groups, signals, user ids, Unix
sockets) goes through here, so a Windows user never meets an import or attribute error
before the first word is said, and ``mypy --platform win32`` checks the whole package
(tests/test_platforms.py). Each function is a thin wrapper: the callers keep their logic.
"""
