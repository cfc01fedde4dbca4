"""kilobit: train, quantize and export tiny models that run integer-only on microcontrollers."""
__version__ = "0.1.0"
