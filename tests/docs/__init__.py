"""The docs, rendered from the warehouse."""
