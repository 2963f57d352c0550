"""Command line: ``python -m torch_fl <verb>`` (also installed as ``torch-fl``)."""

from __future__ import annotations

import argparse
import json
import sys


def _cmd_conformance(args: argparse.Namespace) -> int:
    from torch_fl import conformance

    try:
        return conformance.run(args.plugin, args.option, args.json, args.group)
    except (FileNotFoundError, LookupError) as exc:
        print(exc, file=sys.stderr)
        return 2


def _cmd_plugins(args: argparse.Namespace) -> int:
    import torch_fl

    for c in torch_fl.installed_plugins():
        print(f"{c['name']:<16} {c['origin']:<12} {c['path']}")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    import torch_fl

    torch_fl.activate()
    print(json.dumps(torch_fl.plugin_info(), indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_fl")
    verbs = parser.add_subparsers(dest="verb", required=True)

    p = verbs.add_parser("conformance", help="certify a plugin against the flagos ABI")
    p.add_argument("plugin", help="installed plugin name (host, cuda, ...) or path to libflagos_<name>.so")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="plugin option, e.g. strict=1 or devices=2 (repeatable)")
    p.add_argument("--json", metavar="FILE", help="write the JSON report here")
    p.add_argument("--group", action="append", default=[], help="run only this group (repeatable)")
    p.set_defaults(func=_cmd_conformance)

    p = verbs.add_parser("plugins", help="list the plugins the core can see")
    p.set_defaults(func=_cmd_plugins)

    p = verbs.add_parser("info", help="activate a plugin and describe it")
    p.set_defaults(func=_cmd_info)

    args = parser.parse_args(argv)
    return args.func(args)
