"""python -m tools.plugin_wheel NAME [--out DIR] [--build-dir DIR] [-D VAR=VALUE ...]"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from tools.build_config import BuildConfigError

from . import ROOT, build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.plugin_wheel", description=__doc__.split("\n")[0])
    parser.add_argument("name", help="the plugin: host, or a CUDA-shaped vendor (cuda, ppu, metax, dcu, musa)")
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="where the wheel goes (dist/)")
    parser.add_argument("--build-dir", type=Path, help="the CMake build folder (build/plugin_wheel/NAME)")
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="VAR=VALUE",
                        help="a CMake cache entry, e.g. -D CMAKE_BUILD_TYPE=Debug")
    args = parser.parse_args(argv)
    try:
        wheel = build(args.name, args.out, args.build_dir, tuple(args.defines))
    except subprocess.CalledProcessError as exc:
        print(f"[flagos] plugin_wheel: {' '.join(exc.cmd[:2])} failed for plugins/{args.name} (output above)",
              file=sys.stderr)
        return 1
    except (FileNotFoundError, BuildConfigError) as exc:
        print(exc, file=sys.stderr)
        return 1
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
