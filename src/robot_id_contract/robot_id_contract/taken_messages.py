"""Subscriptions whose messages a node takes itself, in batches, instead of one executor callback per message: at
1 kHz the executor's own work per message, in Python, is most of what a loaded machine cannot keep up with."""

from __future__ import annotations

from collections.abc import Iterator

from rclpy.callback_groups import CallbackGroup
from rclpy.subscription import Subscription


class TakenByTheNode(CallbackGroup):
    """A callback group the executor never runs (nor waits on): the node takes its subscriptions' messages with
    take_waiting."""

    def can_execute(self, entity: object) -> bool:
        return False

    def beginning_execution(self, entity: object) -> bool:
        return False

    def ending_execution(self, entity: object) -> None:
        """Nothing began."""


def take_waiting(subscription: Subscription) -> Iterator[tuple[object, dict]]:
    """Every message waiting in the subscription's queue, oldest first, with its message info (the middleware's
    receive time among it)."""
    with subscription.handle:
        while (taken := subscription.handle.take_message(subscription.msg_type, subscription.raw)) is not None:
            yield taken
