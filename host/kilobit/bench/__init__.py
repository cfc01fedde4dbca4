"""Benchmarks: `kilobit bench NAME` writes docs/benchmarks/NAME.md.

The pieces several reports share: the run's header lines (`run_lines`), the must-show table
with its verdict (`must_show_lines`), a section put into a page as it stands (`replace_section`)
and the atomic write of the report (`write_report`).
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


def replace_section(text, lines):
    """A report's text with the section that starts with lines[0] (a "## ..." heading; up to
    the next one) replaced by lines, or, when it has none, inserted before its "## Verdict"
    (else at its end)."""
    page = text.rstrip("\n").split("\n")
    heads = [i for i, ln in enumerate(page) if ln.startswith("## ")]
    start = next((i for i in heads if page[i] == lines[0]), None)
    if start is None:
        start = end = next((i for i in heads if page[i] == "## Verdict"), len(page))
    else:
        end = next((i for i in heads if i > start), len(page))
    gap = [""] if start and page[start - 1] else []
    body = list(lines) + ([""] if lines[-1] and end < len(page) else [])
    return "\n".join(page[:start] + gap + body + page[end:]) + "\n"


def write_report(out, text):
    """Write text to the file out (its folder made when missing) as every output is written
    (kilobit.core.outfile): an interrupted run never leaves a half-written report behind."""
    from kilobit.core import outfile
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    outfile.write(out, text)
