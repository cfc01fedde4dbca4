"""kilobit command line (placeholder while the foundation lands)."""


def main(argv=None):
    raise SystemExit("kilobit: CLI not written yet")
