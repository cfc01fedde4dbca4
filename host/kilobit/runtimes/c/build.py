"""firmware_c built for the host (make -C firmware_c host): the replay tools the c-host runtime
drives (kb_replay, kb_predict, kb_assoc_replay)."""
import os
import subprocess
import threading

from kilobit.core.paths import REPO
from kilobit.runtimes.base import RuntimeFailure

FIRMWARE = os.path.join(REPO, "firmware_c")
BUILD = os.path.join(REPO, "build", "firmware_c")
_lock = threading.Lock()
_built = {}  # make target -> None (built) or the error text; one make per process


def build(target="host"):
    """Run `make -C firmware_c TARGET` once per process; make itself decides what is stale."""
    with _lock:
        if target not in _built:
            try:
                r = subprocess.run(["make", "-s", "-C", FIRMWARE, "BUILD=" + BUILD, target],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   universal_newlines=True)
                _built[target] = None if r.returncode == 0 else (
                    "make %s failed:\n%s" % (target, r.stdout.strip()))
            except OSError as e:
                _built[target] = "cannot run make: %s" % e
        if _built[target] is not None:
            raise RuntimeFailure(_built[target])
    return os.path.join(BUILD, "host")
