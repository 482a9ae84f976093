"""Helpers the tests share: waiting on events, reading the speech record, producer
addresses, a private tmux server, and the tiers each test is marked with."""
