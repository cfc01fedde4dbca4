"""Benchmarks: `kilobit bench NAME` writes docs/benchmarks/NAME.md."""
