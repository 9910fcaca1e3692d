"""Recordings in. In: CSV logs, rosbag2 bags (the recorder's period index), or a known model (synthetic).
Out: a Recording (t, q, dq, τ per joint) cleaned of what real logs contain, with every repair in its notes."""
