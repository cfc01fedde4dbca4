"""Where the checkout's files are: the repository root, found from this file's place
(host/kilobit/core/paths.py)."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
