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
    from torch_fl._plugins import state

    for c in torch_fl.installed_plugins():
        print(f"{c['name']:<16} {c['origin']:<12} {c['path']}  ({state(c)})")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    import torch_fl

    torch_fl.activate()
    print(json.dumps(torch_fl.plugin_info(), indent=2))
    return 0


def _cmd_routes(args: argparse.Namespace) -> int:
    import torch_fl

    torch_fl._initialize()
    print(f"conf: {torch_fl.backend_config_path() or '(none: every op takes the default route)'}")
    default = torch_fl._routing.default_route()
    print(f"default route (unlisted ops): {default.get('route')} ({default.get('why')})")
    rows = torch_fl.routes(args.op) if args.op else torch_fl.routes()
    for r in rows:
        line = f"{r['op']:<44} {r['route']:<13} {r['why']}"
        print(line + (f"  [raises: {r['error']}]" if r.get("error") else ""))
    if not args.op:
        print("routes: " + torch_fl._routing.describe_counts(rows))
    return 0


def _cmd_conf_check(args: argparse.Namespace) -> int:
    import torch_fl

    torch_fl._initialize()
    try:
        routes, notes = torch_fl._routing.check_conf(args.file)
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    for note in notes:
        print(f"[flagos] {note}", file=sys.stderr)
    summary = torch_fl._routing.describe_counts(routes)
    print(f"{args.file}: OK, {len(routes)} routes ({summary})"
          + (f", {len(notes)} notes" if notes else ""))
    return 0


def _cmd_doctor(args: argparse.Namespace) -> int:
    from torch_fl import _doctor

    return _doctor.run(args.json)


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

    p = verbs.add_parser("routes", help="show the route of every listed operator (or one)")
    p.add_argument("--op", help="one operator, e.g. add.Tensor")
    p.set_defaults(func=_cmd_routes)

    p = verbs.add_parser("doctor", help="what is installed and what this process would do")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_cmd_doctor)

    p = verbs.add_parser("conf", help="routing conf tools")
    conf_verbs = p.add_subparsers(dest="conf_verb", required=True)
    c = conf_verbs.add_parser("check", help="validate a routing conf against this torch and plugin")
    c.add_argument("file")
    c.set_defaults(func=_cmd_conf_check)

    args = parser.parse_args(argv)
    return args.func(args)
