"""Progress of a long command on stderr, one way for every command (issue 24).

    with progress.bar(len(steps), "stream", quiet=a.quiet) as bar:
        for ...:
            bar.update(1, "running accuracy 93.1%")
            bar.print("  480 learnt: ...")     # a line of stdout, the bar kept below it

On a terminal it is tqdm's bar, redrawn in place. When stderr is not a terminal (a log file, a
pipe, CI) nothing is redrawn: no carriage returns splice a log into one long line; instead a
plain line is written at every tenth of the way, each ending in a newline. Either shows only
once the work has taken `after` seconds (default AFTER), so that quick work prints nothing.
`quiet` writes nothing at all. tqdm is a runtime dependency (pyproject.toml).
"""
import sys
import time

#: seconds of work before a bar or a line appears
AFTER = 1.0


class _Lines:
    """The bar of a stream that is not a terminal: a line at every tenth of the way."""

    def __init__(self, total, desc, stream, after):
        self.total, self.desc, self.stream = max(int(total), 1), desc, stream
        self.n, self.tenth, self.t0, self.after = 0, 0, time.monotonic(), after
        self.text = ""

    def update(self, n=1, text=None):
        self.n += n
        if text is not None:
            self.text = text
        tenth = min(10, 10 * self.n // self.total)
        if tenth > self.tenth and time.monotonic() - self.t0 >= self.after:
            self.tenth = tenth
            self.stream.write("%s: %d/%d (%d%%, %.0f s)%s\n"
                              % (self.desc, self.n, self.total, 100 * self.n // self.total,
                                 time.monotonic() - self.t0,
                                 ", " + self.text if self.text else ""))
            self.stream.flush()

    def print(self, line, file):
        print(line, file=file, flush=True)

    def close(self):
        pass


class _Bar:
    """tqdm's bar on a terminal."""

    def __init__(self, total, desc, stream, after):
        from tqdm import tqdm
        self.bar = tqdm(total=total, desc=desc, file=stream, leave=False, dynamic_ncols=True,
                        unit="step", delay=after)

    def update(self, n=1, text=None):
        if text is not None:
            self.bar.set_postfix_str(text, refresh=False)
        self.bar.update(n)

    def print(self, line, file):
        """The line above the bar, which is then drawn again below it."""
        with self.bar.external_write_mode(file=file):
            print(line, file=file, flush=True)

    def close(self):
        self.bar.close()


class _Silent:
    def update(self, n=1, text=None):
        pass

    def print(self, line, file):
        print(line, file=file, flush=True)

    def close(self):
        pass


class bar:
    """A progress bar over `total` steps on `stream` (stderr): tqdm's on a terminal, a line per
    tenth elsewhere, nothing when quiet. A context manager; update(n, text) advances it,
    print(line) prints a line of the command's own around it."""

    def __init__(self, total, desc, quiet=False, stream=None, after=AFTER):
        stream = sys.stderr if stream is None else stream
        if quiet:
            self.impl = _Silent()
        elif is_terminal(stream):
            self.impl = _Bar(total, desc, stream, after)
        else:
            self.impl = _Lines(total, desc, stream, after)

    def update(self, n=1, text=None):
        self.impl.update(n, text)

    def print(self, line, file=None):
        """Print a line of the command's own (stdout by default) without cutting the bar."""
        self.impl.print(line, sys.stdout if file is None else file)

    def close(self):
        self.impl.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
