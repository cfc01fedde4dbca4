"""Benchmarks: `kilobit bench NAME` writes docs/benchmarks/NAME.md.

The pieces several reports share: the run's header lines (`run_lines`), the must-show table
with its verdict (`must_show_lines`) and the atomic write of the report (`write_report`).
"""
import datetime
import os
import platform


def run_lines(seconds):
    """The date, machine and run-time lines of a report header, then a blank line."""
    import numpy as np

    return ["- date: %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "- machine: %s %s, Python %s, numpy %s, %d CPUs (shared)"
            % (platform.system(), platform.release(), platform.python_version(),
               np.__version__, os.cpu_count() or 0),
            "- run time: %.0f s" % seconds,
            ""]


def must_show_lines(lines):
    """The "## Must show" section for (claim, measured, passed) lines: one table row each and
    the overall result (PASS, or how many of them failed)."""
    out = ["## Must show", "", "| claim | measured | result |", "|---|---|---|"]
    for claim, got, ok in lines:
        out.append("| %s | %s | %s |" % (claim, got, "PASS" if ok else "**FAIL**"))
    out += ["", "**Result: %s**" % ("PASS" if all(ok for _, _, ok in lines) else
                                    "FAIL (%d of %d)" % (sum(not ok for _, _, ok in lines),
                                                         len(lines))), ""]
    return out


def write_report(out, text):
    """Write text to the file out (its folder made when missing) through a temporary file and
    os.replace: an interrupted run never leaves a half-written report behind."""
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, out)
