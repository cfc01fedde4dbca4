"""Honest help and progress (issue 24).

Every option of every command has a help text that shows its default; the lists of runtimes and
data sets in them are the tables the code reads (kilobit.runtimes.catalog, kilobit.data); the
same options (--quiet, --seed) are where they make sense. Progress is tqdm's bar on a terminal
and plain lines in a log, never a carriage return there, and nothing with --quiet.
"""
import argparse
import io
import subprocess
import sys

import pytest

from kilobit import data
from kilobit.cli import DEFAULT_RUNTIMES, HelpFormatter, build_parser
from kilobit.core import progress
from kilobit.models import registry
from kilobit.runtimes import catalog


def parsers(p=None, path=("kilobit",)):
    """(command path, parser) of the command line's every parser."""
    p = p or build_parser()
    yield path, p
    for act in p._actions:
        if isinstance(act, argparse._SubParsersAction):
            for name, sp in act.choices.items():
                yield from parsers(sp, path + (name,))


def options(p):
    return [a for a in p._actions if not isinstance(a, (argparse._HelpAction,
                                                        argparse._SubParsersAction))]


def helps(p):
    """{dest: its text in the parser's help}."""
    f = HelpFormatter(p.prog)
    return {a.dest: f._get_help_string(a) for a in options(p)}


def test_every_option_is_explained_with_its_default():
    n = 0
    for path, p in parsers():
        for act in options(p):
            n += 1
            name = " ".join(path) + " " + (act.option_strings or [act.dest])[0]
            assert act.help and act.help != argparse.SUPPRESS, name + ": no help"
            shown = helps(p)[act.dest]
            if act.option_strings and act.default not in (None, False, [], argparse.SUPPRESS):
                assert "default" in shown, name + ": default not shown"
        p.format_help()  # every help renders (a % in a default is escaped)
    assert n > 150


def test_runtime_and_data_set_lists_are_the_code_tables():
    by_path = dict(parsers())
    for path, dest in ((("kilobit", "golden", "check"), "runtimes"),
                       (("kilobit", "predict"), "runtime")):
        act = next(a for a in options(by_path[path]) if a.dest == dest)
        for name in catalog.ALL:
            assert "%s: %s" % (name, catalog.ABOUT[name]) in act.help, (path, name)
        assert "BOARD@PORT" in act.help
    for path, p in parsers():
        for act in options(p):
            if act.dest == "data":  # every model takes every data set (rkp, ckp: one-vs-rest)
                for info in data.DATASETS.values():
                    assert info.name in act.help, (path, info.name)
    check = dict(parsers())[("kilobit", "golden", "check")]
    text = check.format_help()
    for name in DEFAULT_RUNTIMES:
        assert "%s: %s (default)" % (name, catalog.ABOUT[name]) in " ".join(text.split())


def test_quiet_and_seed_where_they_make_sense():
    by_path = dict(parsers())
    want_quiet = [("kilobit", "train", s.name) for s in registry.REGISTRY] + [
        ("kilobit", "stream"), ("kilobit", "inspect")]
    want_seed = [("kilobit", "train", s.name) for s in registry.REGISTRY] + [
        ("kilobit", "eval"), ("kilobit", "predict"), ("kilobit", "golden", "make"),
        ("kilobit", "stream")]
    for path in want_quiet:
        assert "quiet" in {a.dest for a in options(by_path[path])}, path
    for path in want_seed:
        assert "seed" in {a.dest for a in options(by_path[path])}, path


def test_data_list_is_the_table_and_loads_as_it_says():
    """`kilobit data list` prints DATASETS; each data set loads here with its row's sizes."""
    import numpy as np

    from kilobit.cli.data import table
    rows = table()
    assert [r[0] for r in rows] == list(data.NAMES)
    for info in data.DATASETS.values():
        assert info.missing() is None, info.name  # set-up installs every source
        s = data.load(info.name, seed=0, binary=False)
        classes = len(np.unique(np.concatenate([s.y_train, s.y_test])))
        assert (len(s.y_train), len(s.y_test), s.dims, classes) == \
            (info.train, info.test, info.features, info.classes), info.name
        assert info.task == ("binary" if classes == 2 else "multi-class")
        assert info.train + info.test <= info.rows


# --- progress ------------------------------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_in_a_log_is_lines_without_carriage_returns():
    log = io.StringIO()
    with progress.bar(1000, "work", stream=log, after=0) as bar:
        for i in range(1000):
            bar.update(1, "step %d" % i)
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and len(lines) == 10
    assert lines[-1].startswith("work: 1000/1000 (100%, ") and lines[-1].endswith("step 999")


def test_progress_waits_before_it_shows():
    log = io.StringIO()
    with progress.bar(10, "quick", stream=log) as bar:  # done before progress.AFTER
        bar.update(10)
    assert log.getvalue() == ""


def test_progress_on_a_terminal_is_tqdms_bar():
    tty = Terminal()
    with progress.bar(50, "work", stream=tty, after=0) as bar:
        for _ in range(50):
            bar.update(1, "ok")
        out = io.StringIO()
        bar.print("a line of its own", file=out)
    assert "\r" in tty.getvalue() and "work" in tty.getvalue()
    assert out.getvalue() == "a line of its own\n"


def test_quiet_prints_no_progress():
    log = Terminal()
    with progress.bar(100, "work", quiet=True, stream=log, after=0) as bar:
        bar.update(100)
    assert log.getvalue() == ""


def test_a_stream_logged_to_a_file_has_no_carriage_return(tmp_path):
    from conftest import need
    from kilobit.runtimes.avr import kb_sim
    need(kb_sim.missing())
    err = tmp_path / "err.log"
    with open(err, "w") as f:
        p = subprocess.run([sys.executable, "-m", "kilobit.cli", "stream", "--board", "uno",
                            "--data", "banana", "--limit", "2000"], stdout=subprocess.PIPE,
                           stderr=f, text=True, timeout=300)
    assert p.returncode == 0
    assert "\r" not in err.read_text()


@pytest.mark.parametrize("name", [s.name for s in registry.REGISTRY])
def test_train_help_names_its_defaults(name):
    text = dict(parsers())[("kilobit", "train", name)].format_help()
    assert "--quiet" in text and "(default: 0)" in " ".join(text.split())  # the seed
