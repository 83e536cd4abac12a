"""pytest hooks (being written)."""
