"""Issue 30, builds and export: what bench/badinput.py's command-line cases cannot express.

- A toolchain that "succeeds" without output (CC=/bin/true), or fails, is one sentence naming
  its log, which holds the whole output; nothing of the failed build stays in the cache.
- Ctrl-C during a firmware build or an export measurement leaves no temporary file or folder
  and no half-made cache entry (before: build/avr-rkp/<board>/<key>/rkp_stream.elf.NNNN.tmp).
- The models gcc -O2 refused with -Werror=array-bounds (a binary ProtoNN, a CKP whose memory
  is under 3 bytes) export for the host and the Cortex-M0+, and run under ASan and UBSan
  without an access out of bounds: the warnings were false, and are silenced where they arise.
- The list of names --name refuses covers every macro the toolchains here define that a
  prefix could meet.
"""
import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import need
from kilobit.cli import main
from kilobit.models.rkp.model import RKPInt
from kilobit.runtimes import buildcache, cnames, export
from kilobit.runtimes.avr import kb_sim


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _leftovers(folder):
    """Temporary or half-made things under a cache folder."""
    bad = []
    for root, dirs, files in os.walk(folder):
        bad += [os.path.join(root, n) for n in dirs + files
                if n.startswith(".") or n.endswith(".tmp")]
        if ("model.h" in files or any(f.endswith(".elf") for f in files)) and not (
                "sizes.json" in files or "does-not-fit.txt" in files):
            bad.append(root)
    return bad


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.kb"
    path.write_bytes(RKPInt("laplace", 4, 2, 12, -6, 255, seed=5).to_bytes())
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setattr(export, "CACHE", str(d))
    return d


def _fake_cc(tmp_path, body):
    """A C compiler of a few shell lines: -MM goes to gcc (export lists its includes first),
    anything else runs `body`."""
    cc = tmp_path / "fakecc"
    cc.write_text('#!/bin/sh\ncase " $* " in *" -MM "*) exec gcc "$@";; esac\n%s\n' % body)
    cc.chmod(0o755)
    return str(cc)


@pytest.mark.parametrize("cc, says, log_has", [
    ("/bin/true", "listing the exported model's includes with /bin/true failed (true exited "
                  "with 0 but printed no dependency rule)", "/bin/true -MM"),
    ("silent", "compiling the exported header for --target host failed (fakecc exited with 0 "
               "but wrote no size.elf)", " -o "),
    ("failing", "compiling the exported header for --target host failed (fakecc exited with "
                "1: boom.c:1: error: the whole log's first error)", "and its second line"),
])
def test_a_toolchain_that_fails_or_writes_nothing_is_one_sentence(tmp_path, model, cache,
                                                                  monkeypatch, cc, says, log_has):
    need(None if shutil.which("gcc") and shutil.which("size") else "gcc and size")
    if cc == "silent":
        cc = _fake_cc(tmp_path, "exit 0")
    elif cc == "failing":
        cc = _fake_cc(tmp_path, "echo 'boom.c:1: error: the whole log'\"'\"'s first error' >&2"
                                "\necho 'and its second line' >&2\nexit 1")
    monkeypatch.setenv("CC", cc)
    code, out, err = _cli("export", model, "-o", tmp_path / "m.h", "--target", "host")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("kilobit: error: " + says), lines[0]
    log = lines[0].rsplit("the whole log: ", 1)[1]
    with open(log) as f:
        assert log_has in f.read()
    os.unlink(log)
    assert not (tmp_path / "m.h").exists()
    assert not _leftovers(str(cache)), _leftovers(str(cache))
    # the cache holds no entry of the failed build: a working compiler makes it whole
    monkeypatch.delenv("CC")
    code, out, err = _cli("export", model, "-o", tmp_path / "m.h", "--target", "host")
    assert code == 0 and "B flash" in out, err
    assert not _leftovers(str(cache))


#: a build in its own process, its caches under argv[1]; prints "go" before it starts
BUILD = textwrap.dedent("""\
    import sys
    from kilobit.models.rkp.model import RKPInt
    from kilobit.runtimes import export
    from kilobit.runtimes.avr import firmware
    firmware.BUILD = sys.argv[1]
    export.CACHE = sys.argv[1] + "/export"
    blob = RKPInt("laplace", 4, 2, 40, -6, 255, seed=7).to_bytes()
    if sys.argv[2] == "firmware":
        firmware.build(blob, "uno")
    else:
        export.header(blob, name="m", target="avr")
    """)


@pytest.mark.parametrize("what", ["firmware", "export"])
def test_ctrl_c_during_a_build_leaves_nothing_behind(tmp_path, what):
    need(kb_sim.missing())
    cache = str(tmp_path / "cache")
    p = subprocess.Popen([sys.executable, "-c", BUILD, cache, what], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    started = None
    deadline = time.monotonic() + 120
    while started is None and p.poll() is None and time.monotonic() < deadline:
        for _, dirs, _ in os.walk(cache):
            started = next((d for d in dirs if d.endswith(".tmp")), None)
            if started:
                break
        time.sleep(0.01)
    assert started, "the build never started its private folder (or ended first)"
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert "KeyboardInterrupt" in err, err  # it was interrupted, not finished
    assert not _leftovers(cache), _leftovers(cache)


def test_make_runs_one_at_a_time_and_fails_in_one_sentence(tmp_path):
    need(None if shutil.which("make") else "make")
    (tmp_path / "Makefile").write_text("all:\n\t@echo 'x.c:3: error: no such thing' >&2; "
                                       "exit 1\n")
    try:
        why = buildcache.make(str(tmp_path), [], "make of a test")
    finally:
        os.unlink(buildcache.lock_path(str(tmp_path)))
    assert why.startswith("make of a test failed (make exited with 2: x.c:3: error: no such "
                          "thing); the whole log: "), why
    assert "\n" not in why
    # two makes of one folder at once (threads: flock excludes each open of the lock file)
    import threading
    (tmp_path / "Makefile").write_text("all:\n\t@echo start >> log; sleep 0.3; "
                                       "echo end >> log\n")
    try:
        runs = [threading.Thread(target=buildcache.make, args=(str(tmp_path), [], "make"))
                for _ in range(2)]
        for t in runs:
            t.start()
        for t in runs:
            t.join()
    finally:
        os.unlink(buildcache.lock_path(str(tmp_path)))
    assert (tmp_path / "log").read_text().split() == ["start", "end", "start", "end"]


#: calls every API function of an exported header many times (ASan, UBSan)
DRIVER = """\
#include <stdio.h>
#include "m.h"
static uint32_t s = 12345u;
static uint8_t rnd(void) { s = s * 1103515245u + 12345u; return (uint8_t)(s >> 16); }
int main(void)
{
    uint8_t codes[M_DIMS];
    long sum = 0;
    int i, j;
    m_init();
    for (i = 0; i < 5000; i++) {
        for (j = 0; j < M_DIMS; j++)
            codes[j] = (uint8_t)(rnd() & ((1u << M_BITS) - 1u));
#ifdef M_KIND_LEARNER
        sum += m_learn(codes, (uint8_t)(rnd() & 1u), 0) + m_predict(codes);
#else
        sum += (long)m_classify(codes);
#endif
    }
    printf("%ld\\n", sum);
    return 0;
}
"""


@pytest.mark.parametrize("train", [
    ["protonn", "--data", "banana", "--epochs", "2,1", "--prototypes", "4"],
    ["protonn", "--data", "banana", "--epochs", "2,1", "--prototypes", "3", "--proj", "1",
     "--bits", "16"],
    ["ckp", "--data", "banana", "--L", "4", "--bits", "1"],
    ["ckp", "--data", "banana", "--L", "16", "--bits", "2"],
], ids=["protonn-int8", "protonn-int16-proj1", "ckp-L4", "ckp-L16"])
def test_false_array_bounds_warnings_export_and_run_clean_under_asan(tmp_path, train):
    need(None if shutil.which("gcc") and shutil.which("arm-none-eabi-gcc") else
         "gcc and arm-none-eabi-gcc")
    kb = tmp_path / "m.kb"
    code, _, err = _cli("train", *train, "--quiet", "-o", kb)
    assert code == 0, err
    for target in ("host", "arm"):  # -Werror=array-bounds refused both before
        code, out, err = _cli("export", kb, "-o", tmp_path / "m.h", "--target", target,
                              "--name", "m")
        assert code == 0, err
    (tmp_path / "drive.c").write_text(DRIVER)
    exe = str(tmp_path / "drive")
    p = subprocess.run(["gcc", "-std=c99", "-O1", "-g", "-fsanitize=address,undefined",
                        "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-o", exe,
                        str(tmp_path / "drive.c")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([exe], capture_output=True, text=True)
    assert p.returncode == 0 and "ERROR" not in p.stderr and "runtime error" not in p.stderr, \
        p.stderr


def test_the_reserved_names_cover_the_toolchains_here():
    """Every macro the toolchains define that a prefix could meet is in cnames.MACROS (run
    `python -m kilobit.runtimes.cnames` to print the list again)."""
    lacks = [t for t in ("gcc", "arm-none-eabi-gcc", "avr-gcc", "avr-g++")
             if shutil.which(t) is None]
    need(", ".join(lacks) or None)
    listed = set().union(*cnames.MACROS.values())
    found = cnames.scan()
    assert found["the compiler"] and found["avr-libc"] and found["the Arduino core"]
    missing = sorted(set().union(*found.values()) - listed)
    assert not missing, missing
    for names in found.values():  # each is refused, and says where it comes from
        for n in sorted(names)[:5]:
            name = n.lstrip("^")
            why = cnames.why_reserved(name)
            assert why, name
            with pytest.raises(Exception, match="--name '%s'" % name):
                export.check_name(name)


def test_prefixes_that_differ_by_case_cannot_share_guards_or_macros(model, tmp_path):
    blob = model.read_bytes()
    need(None if shutil.which("gcc") else "gcc")
    a, _ = export.header(blob, name="a", target="host")
    b, _ = export.header(blob, name="a_", target="host")
    assert "#ifndef KB_EXPORT_A_H" in a and "#ifndef KB_EXPORT_A__H" in b
    with pytest.raises(Exception, match="lower case only"):
        export.header(blob, name="A", target="host")
