"""Glue that drives the sans-I/O engine from real transports, clocks and speech."""
