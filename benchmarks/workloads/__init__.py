"""Benchmark workloads, one module per layer."""
