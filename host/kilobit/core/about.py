"""What every manifest kilobit writes says about the project: its licence, home page and
authors. pyproject.toml repeats them (a build cannot import the package it builds);
tests/test_metadata.py holds the two equal, and the versions of kilobit and kbit equal too."""
import os

from kilobit.core.errors import KilobitError
from kilobit.core.paths import CHECKOUT, REPO

#: an SPDX expression: pyproject's PEP 639 field, library.json and package.json take it as is
LICENSE = "MIT"
HOMEPAGE = "https://github.com/kilobit/kilobit"
AUTHOR = "the kilobit developers"
AUTHOR_EMAIL = "kilobit@users.noreply.github.com"


def license_text():
    """The text of LICENSE: the checkout's, else the copy an installed wheel carries in its
    .dist-info (PEP 639 puts it under licenses/), so that an exported library bears it either
    way."""
    if CHECKOUT:
        with open(os.path.join(REPO, "LICENSE")) as f:
            return f.read()
    from importlib import metadata
    text = metadata.distribution("kilobit").read_text("licenses/LICENSE")
    if text is None:
        raise KilobitError("kilobit's LICENSE is neither in the checkout nor in the installed "
                           "package's metadata")
    return text
