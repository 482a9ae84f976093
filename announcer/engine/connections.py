"""What the engine knows of each connection: its subscription, closed, or mapped by us."""

from __future__ import annotations


class Connections:
    """The subscriptions replies must carry (§5), the connections whose producer closed
    its subscription (§5.8), and the sources announcer maps itself (trusted with its own
    ``x-announcer`` extension, issue 22 item 3)."""

    def __init__(self) -> None:
        self._subscriptions: dict[str, str] = {}
        # Connections whose producer closed the subscription (§5.8) until a new one.
        self._closed: set[str] = set()
        # Sources announcer maps itself: the only ones trusted with ``x-announcer``.
        self._mapped: set[str] = set()

    def accepted(self, source_id: str, subscription_id: str) -> None:
        """A ``subscription.accepted`` arrived on ``source_id``."""
        self._subscriptions[source_id] = subscription_id

    def subscribed(self, source_id: str, subscription_id: str) -> None:
        """A subscription was negotiated on ``source_id``: it is open again if it closed."""
        self._subscriptions[source_id] = subscription_id
        self._closed.discard(source_id)

    def subscription(self, source_id: str) -> str | None:
        """The subscription a reply on ``source_id`` carries, or None: it cannot reply."""
        return self._subscriptions.get(source_id)

    def can_reply(self, source_id: str) -> bool:
        return source_id in self._subscriptions

    def lost(self, source_id: str) -> None:
        """The connection ended (§8.2.5)."""
        self._subscriptions.pop(source_id, None)

    def closed(self, source_id: str) -> None:
        """The producer closed the subscription (§5.8.2): it applies defaults itself."""
        self._subscriptions.pop(source_id, None)
        self._closed.add(source_id)

    def is_closed(self, source_id: str) -> bool:
        return source_id in self._closed

    def trust(self, source_id: str) -> None:
        self._mapped.add(source_id)

    def trusted(self, source_id: str) -> bool:
        return source_id in self._mapped
