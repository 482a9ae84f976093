"""The keyboard-driven Textual interface (issue 6).

The app talks to the rest of the product only through :class:`UiSession`
(``session.py``), so it can be driven by the live runtime, by an engine fed
from a file, or by tests with the real engine and a recording speech backend.
"""

from announcer.ui.tui.runner import run_with_session
from announcer.ui.tui.session import AnswerOutcome, UiListener, UiSession, UiStatus

__all__ = ["AnswerOutcome", "UiListener", "UiSession", "UiStatus", "run_with_session"]
