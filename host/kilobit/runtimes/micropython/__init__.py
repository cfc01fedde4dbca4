"""device/kbit on a Python: in-process under CPython (kbit_cpython), MicroPython 1.27's
WebAssembly build under node (mpwasm: the runner, kbit_wasm: the runtime kbit-micropython),
MicroPython 1.29's unix port (kbit_unix). They share the replay scripts of tools/mpwasm."""
