"""firmware_c built for the host (build: make -C firmware_c host) and the runtime c-host that
replays golden steps through its tools (c_host)."""
