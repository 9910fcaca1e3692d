"""A rosbag2 bag written as messages arrive (rosbags' writer; MCAP by default, sqlite3 as an option), flushed to
disk at least every `flush_period_s` so that a hard kill loses at most that much.

rosbags keeps an MCAP chunk in memory until it reaches 1 MiB (three seconds of 1 kHz joint states) and commits
sqlite3 only on close; the periodic flush closes the pending chunk (a complete, indexed record on disk) or commits
the transaction. Both use the writer's `storage` object of the pinned rosbags version.
"""

from __future__ import annotations

import pathlib
import time
from collections.abc import Callable

from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys.store import Typestore

from robot_id_contract.period_index import METADATA_KEY

STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
_INFINITE = QosTime(2147483647, 4294967295)  # rosbag2's "no deadline, lifespan or lease"


def offered_qos(reliable: bool, latched: bool) -> Qos:
    """The publishers' QoS as rosbag2 stores it, so that `ros2 bag play` replays with it (a latched topic stays
    latched)."""
    return Qos(QosHistory.KEEP_LAST, 1 if latched else 100,
               QosReliability.RELIABLE if reliable else QosReliability.BEST_EFFORT,
               QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE,
               _INFINITE, _INFINITE, QosLiveliness.AUTOMATIC, _INFINITE, False)


class BagWriter:
    """Topics are added once; messages are raw CDR bytes with a timestamp in ns (the recorder's receive time)."""

    def __init__(self, path: str | pathlib.Path, typestore: Typestore, storage: str = "mcap",
                 flush_period_s: float = 1.0, clock_s: Callable[[], float] | None = None) -> None:
        if storage not in STORAGES:
            raise ValueError(f"storage must be one of {sorted(STORAGES)}, not '{storage}'")
        self.path = pathlib.Path(path)
        if self.path.exists():
            raise FileExistsError(f"{self.path} exists; choose a new bag path")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.storage = storage
        self.typestore = typestore
        self.writer = Writer(self.path, version=9, storage_plugin=STORAGES[storage])
        self.writer.open()
        self.connections: dict[str, object] = {}
        self.counts: dict[str, int] = {}
        self.flush_period_s = flush_period_s
        self._clock_s = clock_s or time.monotonic
        self._flushed_s = self._clock_s()
        self.closed = False

    def add_topic(self, topic: str, msgtype: str, qos: Qos | None = None) -> None:
        """Register a topic with its type and its publishers' QoS; its full definition (all referenced types)
        goes into the bag."""
        if topic not in self.connections:
            self.connections[topic] = self.writer.add_connection(
                topic, msgtype, typestore=self.typestore, offered_qos_profiles=[qos] if qos else [])
            self.counts[topic] = 0

    def write(self, topic: str, timestamp_ns: int, raw: bytes) -> None:
        """Write one message; flushes when the flush period is over."""
        self.writer.write(self.connections[topic], timestamp_ns, raw)
        self.counts[topic] += 1
        self.flush_if_due()

    def flush_if_due(self) -> None:
        """Flush when the flush period is over (also call it when no message comes, e.g. from a timer)."""
        if not self.closed and self._clock_s() - self._flushed_s >= self.flush_period_s:
            self.flush()

    def flush(self) -> None:
        """Put everything written so far on disk as complete records."""
        storage = self.writer.storage
        if self.storage == "mcap":
            if storage.chunk.bio.tell():
                storage.close_chunk()
            storage.bio.flush()
        else:
            storage.conn.commit()
        self._flushed_s = self._clock_s()

    def close(self, period_index_yaml: str | None = None) -> None:
        """Finish the bag (index, summary, metadata.yaml); the period index goes into metadata's custom_data."""
        if self.closed:
            return
        if period_index_yaml is not None:
            self.writer.set_custom_data(METADATA_KEY, period_index_yaml)
        self.writer.close()
        self.closed = True
