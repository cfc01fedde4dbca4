"""Errors the CLI turns into a clear message and a non-zero exit."""


class KilobitError(Exception):
    """Base class: anything the user can fix (bad input, bad file, budget that cannot fit)."""


class DataError(KilobitError):
    """Malformed data: bad CSV, NaN, wrong dimensions, unknown data set."""


class ModelFileError(KilobitError):
    """A model file that is foreign, truncated, corrupt, or of an unsupported version/type."""
