"""Public API: ``Coalescer(language="en")`` turns streamed text into sentences.

``push(text) -> list[str]`` returns sentences ready to speak; ``flush() -> list[str]``
returns the rest when the output completes. See :mod:`announcer.engine.coalescer`.
"""

from announcer.engine.coalescer import Coalescer

__all__ = ["Coalescer"]
