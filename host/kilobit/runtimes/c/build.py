"""firmware_c built for the host (make -C firmware_c host): the replay tools the c-host runtime
drives (kb_replay, kb_predict, kb_assoc_replay)."""
import os
import threading

from kilobit.core import paths
from kilobit.runtimes import buildcache
from kilobit.runtimes.base import RuntimeFailure

FIRMWARE = paths.firmware_c()
BUILD = paths.cache("firmware_c")
_lock = threading.Lock()
_built = {}  # make target -> None (built) or the error text; one make per process


def build(target="host"):
    """Run `make -C firmware_c TARGET` once per process; make itself decides what is stale,
    under buildcache's lock so that parallel processes never write the same file at once."""
    with _lock:
        if target not in _built:
            _built[target] = buildcache.make(FIRMWARE, ["BUILD=" + BUILD, target],
                                             "make -C firmware_c %s" % target)
        if _built[target] is not None:
            raise RuntimeFailure(_built[target])
    return os.path.join(BUILD, "host")
