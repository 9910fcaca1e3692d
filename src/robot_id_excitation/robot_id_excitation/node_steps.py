"""How long the excitation node's callbacks ran and how old and late its joint states were."""

from __future__ import annotations

import time


class Timing:
    """How long the node's callbacks ran and how old the joint states were at its steps, while the arm moved (before,
    a step may wait for the planning thread, which holds the interpreter for most of a second: nothing moves)."""

    def __init__(self) -> None:
        self.worst_joint_state_s = 0.0
        self.worst_step_s = 0.0
        self.largest_state_age_s = 0.0
        self.largest_receipt_gap_s = 0.0
        """the longest time between the receipts of two successive joint states the node took (the middleware's
        receive times; a late step finds only the newest few in the middleware's queue)"""
        self.largest_receipt_lag_s = 0.0
        """the longest time from a joint state's stamp to its receipt"""
        self._previous_receipt_s: float | None = None
        self.longest_collection_s = 0.0
        """the longest garbage collection of the interpreter (the whole run): it stops every Python thread"""
        self._collection_began_s = 0.0

    def on_collection(self, phase: str, _info: dict) -> None:
        """For gc.callbacks."""
        if phase == "start":
            self._collection_began_s = time.perf_counter()
        else:
            self.longest_collection_s = max(self.longest_collection_s, time.perf_counter() - self._collection_began_s)

    def received(self, received_s: float, stamp_s: float | None) -> None:
        """A joint state's receipt while the arm moves: where a stale state came from, the stream or this node."""
        if self._previous_receipt_s is not None:
            self.largest_receipt_gap_s = max(self.largest_receipt_gap_s, received_s - self._previous_receipt_s)
        if stamp_s:
            self.largest_receipt_lag_s = max(self.largest_receipt_lag_s, received_s - stamp_s)
        self._previous_receipt_s = received_s

    @property
    def worst_callback_s(self) -> float:
        return max(self.worst_joint_state_s, self.worst_step_s)

    def line(self, timeout_s: float) -> str:
        return (f"timing while the arm moved: the longest callback ran {1000 * self.worst_callback_s:.1f} ms (joint "
                f"states: at most {1000 * self.worst_joint_state_s:.2f} ms); the joint states were at most "
                f"{1000 * self.largest_state_age_s:.1f} ms old at a step (timeout {1000 * timeout_s:.0f} ms); they "
                f"were received at most {1000 * self.largest_receipt_gap_s:.1f} ms apart and "
                f"{1000 * self.largest_receipt_lag_s:.1f} ms after their stamps; the longest garbage collection "
                f"{1000 * self.longest_collection_s:.1f} ms")
