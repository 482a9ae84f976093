"""announcer: hear what an AI agent is doing and answer it from the keyboard.

The package is split the way the product is: a sans-I/O core (``protocol``,
``i18n``, ``engine``, ``formats``) that takes events and a clock and returns
decisions, and thin adapters around it (``transports``, ``speech``,
``producer``, ``config``, ``runtime``, ``ui``, ``cli``). See docs/architecture.md.
"""

__version__ = "0.1.0"
