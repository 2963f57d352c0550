"""The DT_NEEDED names of a shared library, read from its dynamic section
(64-bit little-endian ELF, what every platform torch_fl builds for is), so
that bundling needs neither readelf nor a vendor toolchain on the build
machine."""

from __future__ import annotations

import struct
from pathlib import Path

_DT_NEEDED, _DT_STRTAB, _PT_LOAD, _PT_DYNAMIC = 1, 5, 1, 2


class NotAnElf(ValueError):
    """The file is not a 64-bit little-endian ELF shared object."""


def needed(path: Path) -> list[str]:
    """The library names `path` asks the dynamic loader for, in order."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise NotAnElf(f"{path}: not a 64-bit little-endian ELF file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == _PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == _PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return []  # statically linked
    entries, strtab = [], None
    for off in range(dynamic[0], dynamic[0] + dynamic[1], 16):
        tag, value = struct.unpack_from("<qQ", data, off)
        if tag == 0:
            break
        if tag == _DT_NEEDED:
            entries.append(value)
        elif tag == _DT_STRTAB:
            strtab = value
    if strtab is None:
        return []
    # DT_STRTAB is an address: map it to a file offset through its PT_LOAD.
    base = next((offset + strtab - vaddr for vaddr, offset, size in loads if vaddr <= strtab < vaddr + size), None)
    if base is None:
        raise NotAnElf(f"{path}: DT_STRTAB outside every loaded segment")
    return [data[base + e:data.index(b"\0", base + e)].decode() for e in entries]
