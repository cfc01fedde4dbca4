"""Where an AVR firmware's cycles go: kb_sim's --profile (kilobit.runtimes.avr.kb_sim.run,
profile=...) per function of the ELF, or per instruction with its disassembly.

    python -m kilobit.runtimes.avr.profile firmware.elf profile.txt [--per N] [--lines]

`--per N` divides the cycles by N (the inputs of a replay: cycles an input). The profile counts
the cycles of each instruction at the address it starts at, so a function's total holds what
its own instructions took, not its callees'.
"""
import argparse
import bisect
import re
import subprocess


def read(path):
    """{address: cycles} of a kb_sim --profile file."""
    out = {}
    with open(path) as f:
        for line in f:
            a, c = line.split()
            out[int(a, 16)] = int(c)
    return out


def symbols(elf):
    """[(address, name)] of the symbols in the ELF's .text, sorted by address (avr-objdump -t:
    functions, and the labels between them; absolute symbols such as __stack are left out)."""
    p = subprocess.run(["avr-objdump", "-t", elf], capture_output=True, text=True, check=True)
    out = []
    for line in p.stdout.splitlines():
        m = re.match(r"([0-9a-f]{8}) (.{7}) (\S+)\s+[0-9a-f]+ (\S+)$", line)
        if m and m.group(3) == ".text" and not m.group(4).startswith("."):
            out.append((int(m.group(1), 16), m.group(4)))
    return sorted(out)


def per_function(elf, prof):
    """[(cycles, name)] from the most."""
    syms = symbols(elf)
    starts = [a for a, _ in syms]
    acc = {}
    for a, c in prof.items():
        i = bisect.bisect_right(starts, a) - 1
        name = syms[i][1] if i >= 0 else "?"
        acc[name] = acc.get(name, 0) + c
    return sorted(((c, n) for n, c in acc.items()), reverse=True)


def per_line(elf, prof):
    """[(address, cycles, disassembly line)] of the instructions that took cycles."""
    p = subprocess.run(["avr-objdump", "-d", elf], capture_output=True, text=True, check=True)
    out = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s", line)
        if m and int(m.group(1), 16) in prof:
            a = int(m.group(1), 16)
            out.append((a, prof[a], line.strip()))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m kilobit.runtimes.avr.profile",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("elf")
    ap.add_argument("profile")
    ap.add_argument("--per", type=float, default=1.0, help="divide the cycles by this")
    ap.add_argument("--lines", action="store_true", help="per instruction, with disassembly")
    a = ap.parse_args(argv)
    prof = read(a.profile)
    if a.lines:
        for _, c, text in per_line(a.elf, prof):
            print("%10.1f  %s" % (c / a.per, text))
        return 0
    total = sum(prof.values())
    for c, name in per_function(a.elf, prof):
        print("%10.1f  %5.1f%%  %s" % (c / a.per, 100.0 * c / total, name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
