"""Payload identification: a rigid load on a frame of the arm (samples, estimate, exports)."""
