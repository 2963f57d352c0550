"""python -m tools.build_config {show,write}

  show                       print the resolved configuration (JSON)
  write RECORD [--cmake F]   write the build record (torch_fl/_build_config.py)
                             and, optionally, the switches as CMake variables

--define NAME=VALUE passes a -D value CMake was given for one of the build
variables. Exit status 1 with one [flagos] line on stderr when the
configuration is refused; warnings are [flagos] lines on stderr too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tools.build_config.resolve import BuildConfigError, resolve


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:  # keep mtimes stable for incremental builds
        path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.build_config")
    parser.add_argument("command", choices=["show", "write"])
    parser.add_argument("record", nargs="?", type=Path)
    parser.add_argument("--cmake", type=Path, help="also write the switches as CMake variables")
    parser.add_argument("--version", help="torch_fl's version (default: pyproject.toml)")
    parser.add_argument("--define", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    if args.command == "write" and args.record is None:
        parser.error("write needs the record's path")
    defines = dict(d.split("=", 1) for d in args.define if "=" in d)
    try:
        resolved = resolve(defines=defines, version=args.version)
    except BuildConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    for line in resolved.warnings:
        print(line, file=sys.stderr)
    if args.command == "show":
        print(json.dumps(resolved.record(), indent=2))
        return 0
    _write(args.record, resolved.to_module())
    if args.cmake:
        _write(args.cmake, resolved.to_cmake())
    return 0


if __name__ == "__main__":
    sys.exit(main())
