"""Estimation of base, essential and friction parameters from recordings, validation and reports."""
