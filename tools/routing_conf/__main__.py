"""python -m tools.routing_conf generate [--out DIR] [--flaggems-ops FILE] [--measured DIR]
python -m tools.routing_conf measure [--ops OP,...] [--out FILE]
python -m tools.routing_conf flaggems-ops SOURCE [--out FILE]
python -m tools.routing_conf device-check OUT.inc"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _generate(args: argparse.Namespace) -> int:
    # torch_fl must import without installing a shipped conf (they are the output).
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as empty:
        empty.write('[conf]\ndefault = "cpu_fallback"\n')
    os.environ["FLAGOS_BACKEND_CONFIG"] = empty.name
    # FlagGems coverage comes from its published list (--flaggems-ops), not
    # from whatever flag_gems this Python happens to import.
    os.environ["FLAGOS_DISABLE_FLAGGEMS_PY"] = "1"
    from tools.routing_conf.facts import collect
    from tools.routing_conf.flaggems_ops import load_list
    from tools.routing_conf.measure import load_measured
    from tools.routing_conf.platforms import NOT_ON_CUDA, conf_specs, cuda_ops
    from tools.routing_conf.writer import render

    specs = [s for s in conf_specs() if not args.only or s.file in args.only.split(",")]
    facts = collect(native=any(kind == "native" for s in specs for _, kind in s.route_sets))
    os.unlink(empty.name)
    from torch_fl import _env
    from torch_fl.tileops import table as tileops_table

    codegen_all = bool(_env.get("FLAGOS_CODEGEN_ALL"))
    flaggems_all = load_list(args.flaggems_ops)
    routable = set(facts.routable)
    sets = {
        "cpu": facts.cpu,
        "cuda": cuda_ops(facts.cuda, facts.cuda_only, codegen_all),
        "native_host": facts.native_host,
        "flaggems": {op for op in flaggems_all if op in routable},
    }
    measured = {spec.platform: load_measured(args.measured, spec.platform) for spec in specs}
    os.makedirs(args.out, exist_ok=True)
    for spec in specs:
        routes: dict[str, str] = {}
        for set_name, kind in spec.route_sets:
            routes.update({op: kind for op in sets[set_name]})
        found = measured.get(spec.platform) if spec.measured_native else None
        notes = [f"torch {facts.torch_version}: {len(facts.routable)} routable operators; not routable: "
                 + ", ".join(f"{v} {k}" for k, v in sorted(facts.excluded.items()))]
        if codegen_all and any(s == "cuda" for s, _ in spec.route_sets):
            notes.append(f"FLAGOS_CODEGEN_ALL=1: also {len(facts.cuda_only - NOT_ON_CUDA.keys())} leaf ops "
                         "whose CUDA kernel this torch lacks (native_functions.yaml); never listed: "
                         + ", ".join(f"{op} ({why})" for op, why in sorted(NOT_ON_CUDA.items())))
        if any(s == "flaggems" for s, _ in spec.route_sets):
            notes.append(f"FlagGems list: {os.path.basename(args.flaggems_ops)}, {len(flaggems_all)} ops, "
                         f"{len(sets['flaggems'])} routable here")
        if found:
            passing = sorted(op for op, v in found["results"].items() if v.startswith("pass") and op in routable)
            routes.update({op: "native" for op in passing if op not in routes})
            notes.append(f"native: {len(passing)} of {len(found['results'])} measured operators pass "
                         f"({found['file']}: {found['device']}, torch {found['torch']}); the others keep "
                         "their route: " + (", ".join(op for op in sorted(found["results"]) if op not in passing)
                                            or "none"))
        tileops = [op for op in tileops_table.OPS if op in routes] if spec.tileops else []
        path = os.path.join(args.out, spec.file)
        with open(path, "w") as f:
            f.write(render(spec, routes, facts.torch_version, notes, tileops))
        print(f"{path}: {len(routes)} routes")
    return 0


def _measure(args: argparse.Namespace) -> int:
    import torch_fl
    from torch_fl import _env

    from tools.routing_conf import measure

    platform = torch_fl.plugin_info()["name"]
    ops = args.ops.split(",") if args.ops else measure.native_ops()
    if not ops:
        print(f"[measure] plugin {platform} serves no operator natively", file=sys.stderr)
        return 1
    results = measure.measure(ops, use_cache=bool(_env.get("FLAGOS_EXEC_CACHE")))
    out = args.out or os.path.join(ROOT, "confs", "sources", f"{platform}_native.json")
    measure.write(out, platform, results)
    failed = [op for op, v in results.items() if v.startswith("fail")]
    print(f"{out}: {len(results) - len(failed)} of {len(results)} operators without a failure")
    return 0


def _flaggems_ops(args: argparse.Namespace) -> int:
    from tools.routing_conf.flaggems_ops import read_ops

    ops = read_ops(args.source)
    with open(args.out, "w") as f:
        f.write(f"# FlagGems _FULL_CONFIG operators, read from {os.path.basename(args.source)}\n")
        f.write("\n".join(ops) + "\n")
    print(f"{args.out}: {len(ops)} ops")
    return 0


def _device_check(args: argparse.Namespace) -> int:
    from tools.routing_conf.device_check import write_include

    print(f"{args.out}: {write_include(args.out)} ops check their own devices")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.routing_conf")
    verbs = parser.add_subparsers(dest="verb", required=True)
    g = verbs.add_parser("generate", help="write confs/<platform>.toml from the installed torch")
    g.add_argument("--out", default=os.path.join(ROOT, "confs"))
    g.add_argument("--only", help="comma-separated conf files to write (default: all)")
    g.add_argument("--flaggems-ops", default=os.path.join(ROOT, "confs", "sources", "flaggems_ops.txt"))
    g.add_argument("--measured", default=os.path.join(ROOT, "confs", "sources"),
                   help="folder of <platform>_native.json measurements (`measure`)")
    g.set_defaults(func=_generate)
    m = verbs.add_parser("measure", help="run the active plugin's native operators against the CPU")
    m.add_argument("--ops", help="comma-separated operators (default: every one the plugin serves natively)")
    m.add_argument("--out", help="the record (default: confs/sources/<plugin>_native.json)")
    m.set_defaults(func=_measure)
    f = verbs.add_parser("flaggems-ops", help="extract FlagGems' op list from a wheel or source tree")
    f.add_argument("source")
    f.add_argument("--out", default=os.path.join(ROOT, "confs", "sources", "flaggems_ops.txt"))
    f.set_defaults(func=_flaggems_ops)
    d = verbs.add_parser("device-check", help="write the ops that check their own devices (a C include)")
    d.add_argument("out")
    d.set_defaults(func=_device_check)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
