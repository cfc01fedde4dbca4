#!/usr/bin/env python3
"""The README's commands, run as it shows them (issue 24): what tests/test_readme.py checks.

    python scripts/readme.py            # run them; exit 1 when the README differs (a diff)
    python scripts/readme.py --write    # rewrite the README's console output from the run

Console sessions (```console blocks): every `$ kilobit ...` line runs, from the repository's
root, in-process, stdout and stderr together; what it prints must be the block's next lines
exactly (a line with MODULE stands for one line per module of device/kbit, as the dry runs print
them). A block runs unless one of its commands is in SKIP_SESSION (a board served until Ctrl-C,
a real serial port). --write replaces each block's output with what ran (a block with MODULE
lines is only checked).

The command list (the ```sh block of "Command line"): every line runs in a scratch folder and
must exit 0, unless SKIP_COMMAND names it with why; figures in a line's comment (bytes, a
percentage) must be in what it printed.
"""
import contextlib
import io
import os
import re
import shlex
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
README = os.path.join(REPO, "README.md")

#: sessions not run: what they start runs until stopped, or needs hardware
SKIP_SESSION = ("kilobit board virtual", "kilobit board sim", "/dev/pts/")
#: commands of the list not run, each with the reason (the rest must run here, quickly)
SKIP_COMMAND = {
    "kilobit golden check tests/golden/*.json": "every golden file on every runtime: minutes",
    "kilobit golden check mine.json --runtime uno@/dev/ttyACM0": "a real Uno",
    "kilobit golden make-set tests/golden": "rewrites the checked-in golden set",
    "kilobit golden make-set --raw": "trains a model of every type on pendigits: minutes",
    "kilobit bench ": "benchmarks take minutes to hours (kilobit bench NAME --quick: CI's)",
    "/dev/ttyACM0": "a real board",
    "kilobit demo": "every runtime (tests/test_cli.py runs it)",
}


def blocks(text, fence):
    """[(first line index, lines)] of the README's ```<fence> blocks."""
    out, cur = [], None
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        if cur is None and ln.strip() == "```" + fence:
            cur = (i + 1, [])
        elif cur is not None and ln.strip() == "```":
            out.append(cur)
            cur = None
        elif cur is not None:
            cur[1].append(ln)
    return out


def sessions(text):
    """[(line index of the block, [(command, expected lines)])] of the runnable sessions."""
    out = []
    for start, lines in blocks(text, "console"):
        cmds = []
        for ln in lines:
            if ln.startswith("$ "):
                cmds.append((ln[2:], []))
            elif cmds:
                cmds[-1][1].append(ln)
        if cmds and all(c.startswith("kilobit ") and not any(s in c for s in SKIP_SESSION)
                        for c, _ in cmds):
            out.append((start, cmds))
    return out


def kilobit(command):
    """(exit status, the lines it printed on stdout and stderr) of a kilobit command line."""
    from kilobit.cli import main
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        code = main(shlex.split(command)[1:])
    return code, buf.getvalue().splitlines()


def expand(lines):
    """A line naming MODULE stands for one line per module of device/kbit."""
    from kilobit.runtimes import boards
    out = []
    for ln in lines:
        out += [ln.replace("MODULE", m[:-3]) for m in boards.package_modules()] \
            if "MODULE" in ln else [ln]
    return out


def run_sessions(text, write=False):
    """([(command, expected, got)] of every session command that differs, the README text with
    the sessions' output as run when write)."""
    lines = text.split("\n")
    bad, edits = [], []
    with chdir(REPO):
        for start, cmds in sessions(text):  # in the README's order: a session may use the last
            new = []
            for cmd, want in cmds:
                _, got = kilobit(cmd)
                if got != expand(want):
                    bad.append((cmd, want, got))
                new += ["$ " + cmd] + (want if any("MODULE" in w for w in want) else got)
            edits.append((start, start + sum(1 + len(w) for _, w in cmds), new))
    for start, end, new in reversed(edits):
        lines[start:end] = new
    return bad, "\n".join(lines)


def commands(text):
    """[(command, comment)] of the command list (the ```sh block with `kilobit train`)."""
    for _, lines in blocks(text, "sh"):
        if any(ln.startswith("kilobit train ") for ln in lines):
            out = []
            for ln in lines:
                cmd, _, comment = ln.partition("  #")
                out.append((cmd.strip(), comment.strip()))
            return out
    raise AssertionError("no command list in the README")


def skipped(cmd):
    return next((why for key, why in SKIP_COMMAND.items() if key in cmd), None)


def figures(comment):
    """The figures a comment promises: "1745 B" -> "1745 B", "86.79%" -> "0.8679"."""
    out = ["%s B" % b for b in re.findall(r"(\d+) B\b", comment)]
    out += ["%.4f" % (float(p) / 100) for p in re.findall(r"([\d.]+)%", comment)]
    out += ["%s B" % b for b in re.findall(r"(\d+) bytes", comment)]
    return out


def run_commands(text, folder=None):
    """[(command, problem)] of the command list's commands that failed or broke a promise of
    their comment, run in order in `folder` (default: a scratch folder)."""
    bad = []
    with tempfile.TemporaryDirectory(prefix="kilobit-readme-") as tmp, chdir(folder or tmp):
        for cmd, comment in commands(text):
            if skipped(cmd):
                continue
            code, got = kilobit(cmd)
            if code != 0:
                bad.append((cmd, "exit status %d: %s" % (code, got[-1:])))
                continue
            for fig in figures(comment):
                if not any(fig in ln for ln in got):
                    bad.append((cmd, "its comment says %r, it printed %s" % (fig, got)))
    return bad


@contextlib.contextmanager
def chdir(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true",
                    help="rewrite the README's session output from the run")
    a = ap.parse_args(argv)
    with open(README) as f:
        text = f.read()
    bad, new = run_sessions(text, a.write)
    if a.write and new != text:
        with open(README, "w") as f:
            f.write(new)
        print("rewrote the output of %d command(s) in %s" % (len(bad), README))
        return 0
    for cmd, want, got in bad:
        print("$ %s\n  README: %s\n  now:    %s" % (cmd, want, got))
    broken = run_commands(text)
    for cmd, problem in broken:
        print("%s: %s" % (cmd, problem))
    return 1 if bad or broken else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(REPO, "host"))
    sys.exit(main())
