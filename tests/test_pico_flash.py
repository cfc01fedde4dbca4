"""The emulated Pico keeps its flash in a host file across restarts (issue 28, item 7):
`kilobit board virtual --board rp2040 --flash FILE`, driven by the real mpremote.

What is proven here:
- files copied with `mpremote cp` and written by a script run with `mpremote run` are there, byte
  for byte, on a new board started on the same FILE, whether the first one was stopped with
  SIGTERM or killed with SIGKILL (the command's process; the emulator under it stops with it);
  a file still open for writing at the kill is not (FILE holds the last filesystem update).
- `--power-cut N` powers the board off right after its N-th filesystem update: a save
  interrupted between writing PATH.new and renaming it leaves exactly PATH.new.
- a FILE that is not an image of this board (empty, foreign, the wrong size, a corrupt table)
  and a FILE that cannot be written are refused with `kilobit: error: ...`, status 2, before
  any board runs, and left as they were; a symlink FILE stays a symlink.
"""
import os
import select
import signal
import struct
import subprocess
import sys
import time

import pytest

from conftest import need
from kilobit.runtimes.micropython import rp2040_sim
from kilobit.runtimes.micropython.kbit_wasm import node
from test_boards import children, kilobit, mpremote, serve, stop
from test_pico_board import need_pico

# fs.c's layout (tools/pico/README.md, "The file table")
REGION = 0x200000 - 0x0A0000
NEXT, ENT, ENTSIZE = 16, 16 + 2 * 352, 64

SCRIPT = """\
import os
n = 0
for i in range(300):
    n = (n * 31 + i) % 65521
os.mkdir('out')
with open('out/result.txt', 'w') as f:
    f.write('checksum %d\\n' % n)
    f.write('x' * 5000)
print('wrote', n)
"""


def checksum():
    n = 0
    for i in range(300):
        n = (n * 31 + i) % 65521
    return n


def ended(pid, timeout=20):
    """True once process pid is gone (or a zombie) within timeout seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def kill(p, kids):
    """SIGKILL the `kilobit board` process: the emulator it started must stop by itself (it
    watches its parent), and at once, or it would go on writing FILE behind a new board."""
    p.send_signal(signal.SIGKILL)
    p.wait()
    for k in kids:
        if not ended(k):
            os.kill(k, signal.SIGKILL)
            pytest.fail("the emulator %d outlived its killed parent" % k)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_files_survive_a_power_cycle_through_mpremote(tmp_path, how):
    need_pico()
    img = str(tmp_path / "pico.flash")
    payload = bytes((i * 7 + 3) & 0xFF for i in range(9000))  # three blocks of the table
    src = tmp_path / "payload.bin"
    src.write_bytes(payload)
    script = tmp_path / "write.py"
    script.write_text(SCRIPT)

    p, port = serve(["virtual", "--board", "rp2040", "--flash", img])
    kids = children(p.pid)
    try:
        code, _, err = mpremote(port, "cp", str(src), ":payload.bin")
        assert code == 0, err
        assert kids and os.path.getsize(img) == REGION
        code, out, err = mpremote(port, "run", str(script))
        assert code == 0 and out.strip() == "wrote %d" % checksum(), (out, err)
        if how == "SIGKILL":
            # a file being written when the power goes: never closed, never in the table
            w = subprocess.Popen([sys.executable, "-m", "mpremote", "connect", port, "exec",
                                  "f = open('open.txt', 'w'); f.write('y' * 6000); "
                                  "print('open'); import time; time.sleep(600)"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 stdin=subprocess.DEVNULL, text=True)
            try:
                ready, _, _ = select.select([w.stdout], [], [], 60)
                assert ready and w.stdout.readline().strip() == "open"
                kill(p, kids)
            finally:
                w.kill()
                w.wait()
        else:
            stop(p, kids)
    except BaseException:
        if p.poll() is None:
            stop(p, kids)
        raise
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]  # no save left half-done

    p, port = serve(["virtual", "--board", "rp2040", "--flash", img])
    kids = children(p.pid)
    try:
        got = tmp_path / "back.bin"
        code, _, err = mpremote(port, "cp", ":payload.bin", str(got))
        assert code == 0 and got.read_bytes() == payload, err
        code, out, err = mpremote(port, "cat", ":out/result.txt")
        assert code == 0 and out == "checksum %d\n" % checksum() + "x" * 5000, err
        code, out, err = mpremote(port, "ls", ":")
        assert code == 0, err
        names = sorted(line.split()[-1] for line in out.splitlines()[1:])
        assert names == ["lib/", "out/", "payload.bin"], out  # no open.txt after the kill
    finally:
        stop(p, kids)


def test_a_power_cut_between_two_updates_keeps_the_first(tmp_path):
    """A checkpoint's save (PATH.new written and closed, then renamed over PATH) cut after its
    first update, and after its second: the next board sees exactly that state."""
    need_pico()
    from kilobit.runtimes.boards.virtual import POWER_CUT, VirtualBoard
    save = ("with open('ck.new', 'w') as f:\n    f.write('state %d')\n"
            "import os\nos.rename('ck.new', 'ck')\nprint('saved')")
    for cut, left in ((1, ["ck.new"]), (2, ["ck"])):
        img = str(tmp_path / ("cut%d.flash" % cut))
        vb = VirtualBoard(board="rp2040", flash=img, power_cut=cut).start()
        try:
            code, out, _ = mpremote(vb.port, "exec", save % cut, timeout=30)
            assert code != 0 and "saved" not in out  # the board died before it could answer
            vb.proc.wait(timeout=20)
            assert vb.proc.returncode == POWER_CUT
        finally:
            vb.close()
        vb = VirtualBoard(board="rp2040", flash=img).start()
        try:
            code, out, err = mpremote(vb.port, "exec", "import os; print(sorted(os.listdir()))"
                                      "; print(open(%r).read())" % left[0])
            assert code == 0, err
            assert out.splitlines() == [str(sorted(["lib"] + left)), "state %d" % cut]
        finally:
            vb.close()


def fresh_image(path):
    """A new board's image, as board.mjs writes it (stdin at its end: the board stops idle)."""
    need(rp2040_sim.missing())
    r = subprocess.run([node(), rp2040_sim.BOARD_JS, "--flash", str(path)], timeout=60,
                       stdin=subprocess.DEVNULL, capture_output=True)
    assert r.returncode == 0, r.stderr
    data = path.read_bytes()
    assert len(data) == REGION and data[:4] == b"KBF1"
    return data


def patched(data, *edits):
    """data with each (offset, struct format, values...) packed in."""
    b = bytearray(data)
    for at, fmt, *values in edits:
        struct.pack_into(fmt, b, at, *values)
    return bytes(b)


def refused(args, fragment):
    r = kilobit("board", "virtual", "--board", "rp2040", *args, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("kilobit: error: "), r
    assert fragment in r.stderr and "Traceback" not in r.stderr and r.stdout == "", r.stderr


@pytest.mark.parametrize("case, fragment", [
    ("empty", "0 bytes where"),
    ("truncated", "1437696 bytes where"),     # a good image less its last block
    ("foreign", "no file table"),             # a FAT boot sector, padded to the right size
    ("blank", "no file table"),               # erased flash
    ("loop", "its chain meets block"),        # a file whose chain runs into itself
    ("dir-with-data", "a directory with data"),
    ("link", "block 7 links to 4000"),
])
def test_a_flash_file_not_of_this_board_is_refused(tmp_path, case, fragment):
    good = fresh_image(tmp_path / "good.flash")
    lib = ENT  # a new board's only entry: /lib
    assert good[lib:lib + 5] == b"/lib\0"
    data = {
        "empty": b"",
        "truncated": good[:-4096],
        "foreign": (b"\xeb\x3c\x90MSDOS5.0" + bytes(499) + b"\x55\xaa").ljust(REGION, b"\0"),
        "blank": b"\xff" * REGION,
        # entry 1: /f, a file of 8192 bytes from block 5, whose link points back at 5
        "loop": patched(good, (ENT + ENTSIZE, "<54sBxIH", b"/f", 1, 8192, 5),
                        (NEXT + 2 * 5, "<H", 5)),
        "dir-with-data": patched(good, (lib + 56, "<I", 10)),
        "link": patched(good, (NEXT + 2 * 7, "<H", 4000)),
    }[case]
    img = tmp_path / "bad.flash"
    img.write_bytes(data)
    refused(["--flash", str(img)], fragment)
    assert img.read_bytes() == data  # a refused file is left as it was


def test_an_unwritable_flash_path_is_refused(tmp_path):
    need(rp2040_sim.missing())
    (tmp_path / "plain").write_text("x")
    refused(["--flash", str(tmp_path / "nodir" / "pico.flash")], "no such file or directory")
    refused(["--flash", str(tmp_path)], "is not a regular file")
    refused(["--flash", str(tmp_path / "plain" / "pico.flash")], "not a directory")
    os.symlink("nowhere", str(tmp_path / "dangling"))
    refused(["--flash", str(tmp_path / "dangling")], "no such file or directory")
    assert sorted(os.listdir(tmp_path)) == ["dangling", "plain"]  # nothing made, nothing left


def test_a_symlink_flash_file_stays_a_symlink(tmp_path):
    good = fresh_image(tmp_path / "real.flash")
    link = tmp_path / "link.flash"
    os.symlink("real.flash", str(link))
    r = subprocess.run([node(), rp2040_sim.BOARD_JS, "--flash", str(link)], timeout=60,
                       input=b"f = open('s.txt', 'w'); f.write('via link'); f.close()\r\n",
                       capture_output=True)
    assert r.returncode == 0, r.stderr
    assert os.path.islink(link) and (tmp_path / "real.flash").read_bytes() != good
    r = subprocess.run([node(), rp2040_sim.BOARD_JS, "--flash", str(tmp_path / "real.flash")],
                       timeout=60, input=b"print(open('s.txt').read())\r\n", capture_output=True)
    assert b"via link" in r.stdout, r


def test_flash_is_for_the_emulated_pico_only():
    refused_wasm = kilobit("board", "virtual", "--flash", "x.flash", timeout=60)
    assert refused_wasm.returncode == 2 and "need --board rp2040" in refused_wasm.stderr
    help_text = kilobit("board", "virtual", "-h").stdout
    assert "--flash FILE" in help_text and "SIGKILL" in help_text and "--power-cut N" in help_text
