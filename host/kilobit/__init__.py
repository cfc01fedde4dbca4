"""kilobit: train, quantize and export tiny models that run integer-only on microcontrollers."""
__version__ = "0.1.0"

#: the public Python API (kilobit.api), imported on first use: the command line and the runtimes
#: import this package too and need neither scikit-learn nor its start-up time
__all__ = ["RKP", "CKP", "Bonsai", "ProtoNN", "Assoc", "load", "export", "golden_check"]


def __getattr__(name):
    if name in __all__:
        try:
            from kilobit import api
        except ImportError as e:
            raise ImportError("kilobit's Python API needs scikit-learn (pip install "
                              "'kilobit[api]'): %s" % e) from None
        return getattr(api, name)
    raise AttributeError("module 'kilobit' has no attribute %r" % name)


def __dir__():
    return sorted(list(globals()) + __all__)
