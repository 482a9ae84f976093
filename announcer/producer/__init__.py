"""producer."""
