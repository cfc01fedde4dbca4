# What a model costs on a MicroPython board before its first step (kilobit bench rp2040):
#
#   footprint.py MODULE CLASS MODEL
#
# imports kbit.MODULE (and what it imports), then loads the model file MODEL with CLASS.load,
# and prints, one "name value" a line:
#   import_ticks    the import's clock ticks (kbit.compat: cycles on the emulated Pico, else us;
#                   kbit.compat itself is imported first, outside the count, for the clock)
#   heap_import     heap bytes the import took (gc.mem_free() before and after, collected)
#   heap_model      heap bytes the loaded model takes
#   path            which path the model runs: native, or bytecode: why
import gc
import sys

mod_name, cls_name, model_path = sys.argv[1:4]
gc.collect()
free0 = gc.mem_free()
from kbit.compat import elapsed, path, ticks  # noqa: E402 (the clock, before the count)

gc.collect()
free1 = gc.mem_free()
t0 = ticks()
mod = __import__("kbit." + mod_name, None, None, (cls_name,))
dt = elapsed(t0)
gc.collect()
free2 = gc.mem_free()
with open(model_path, "rb") as f:
    m = getattr(mod, cls_name).load(f)
gc.collect()
free3 = gc.mem_free()
print("import_ticks", dt)
print("heap_import", free0 - free2)
print("heap_model", free2 - free3)
print("path", path(m, mod_name))
