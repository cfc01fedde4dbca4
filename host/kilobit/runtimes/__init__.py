"""The runtimes a model runs on, one adapter module each (kilobit.runtimes.base.Runtime), and
what they need: firmware builds (firmware, avrsim), the UART protocol, boards and deploy.

    from kilobit.runtimes.catalog import get
    get("c-host").replay(model_bytes, steps)
"""
from kilobit.runtimes.base import REPO, Runtime, RuntimeFailure  # noqa: F401
