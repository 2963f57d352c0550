"""Names the frames libsegv_trace printed: for each "lib.so(+0xOFFSET)" line
of a log whose library is in LIBDIR (an unstripped build), appends
`addr2line`'s function and file:line. Usage: python symbolize.py LOG LIBDIR."""

from __future__ import annotations

import os
import re
import subprocess
import sys

FRAME = re.compile(r"^(?P<path>\S+?\.so[.\d]*)\(\+(?P<offset>0x[0-9a-f]+)\)")


def symbolize(lines: list[str], libdir: str) -> list[str]:
    out = []
    for line in lines:
        m = FRAME.match(line)
        lib = os.path.join(libdir, os.path.basename(m["path"])) if m else ""
        if m and os.path.exists(lib):
            # The return address points after the call: look up the byte before it.
            where = subprocess.run(["addr2line", "-f", "-C", "-e", lib, hex(int(m["offset"], 16) - 1)],
                                   capture_output=True, text=True).stdout.split("\n")
            line = f"{line.rstrip()}  {where[0]} {where[1] if len(where) > 1 else ''}\n"
        out.append(line)
    return out


if __name__ == "__main__":
    log, libdir = sys.argv[1], sys.argv[2]
    with open(log) as f:
        lines = f.readlines()
    if any("[segv_trace]" in line for line in lines):
        with open(log, "w") as f:
            f.writelines(symbolize(lines, libdir))
