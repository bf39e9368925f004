"""The benchmarks' pieces."""
