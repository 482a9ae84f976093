"""transports."""
