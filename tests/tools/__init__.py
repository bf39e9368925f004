"""Outside the code location: capture and the synthetic logs."""
