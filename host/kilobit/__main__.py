"""The `kilobit` command's entry point (pyproject's [project.scripts]; `python -m kilobit`).

It is this small on purpose: the signal handlers (kilobit.core.interrupt) are set before the
command line's heavy imports (numpy, every model and benchmark), so that Ctrl-C, SIGTERM or
SIGHUP at any moment ends the command with 130, 143 or 129 and no traceback.
"""
import sys

from kilobit.core import interrupt


def main():
    interrupt.install()
    from kilobit.cli import main as cli_main
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
