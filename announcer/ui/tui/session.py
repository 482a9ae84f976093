"""The narrow interface between the Textual app and whatever feeds it.

Textual has no screen-reader layer, so the UI speaks every change itself
through ``UiSession.speak``; everything a producer says reaches it as an
:class:`Announcement`, and every question as a :class:`PendingPrompt`.
Implementations call the listener from any thread; the app marshals the
calls onto its own event loop. The contract itself, with a default for every
optional capability, is the runtime's (:mod:`announcer.runtime.contract`).
"""

from __future__ import annotations

from announcer.runtime.contract import AnswerOutcome, SessionListener, SessionStatus, UiSession

# The runtime's types are the UI's: one definition of what a session reports.
UiStatus = SessionStatus
UiListener = SessionListener

__all__ = ["AnswerOutcome", "UiListener", "UiSession", "UiStatus"]
