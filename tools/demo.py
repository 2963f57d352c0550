"""`make demo`: the main job.

Until the torch device lands (issue: "The flagos device in PyTorch"), the main
job shows what exists: `import torch_fl` selects and loads a plugin, then the
conformance kit certifies that plugin against the ABI — on the host plugin in
both its normal and its strict (PROT_NONE device memory) mode.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

import torch_fl
from torch_fl import conformance


def main() -> int:
    info = torch_fl.plugin_info()
    print(f"active plugin: {info['name']} {info['version']} (ABI {info['abi']}, "
          f"{info['device_count']} devices) from {info['path']}")
    modes = [["strict=0"], ["strict=1"]] if info["name"] == "host" else [[]]
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        for options in modes:
            report = os.path.join(tmp, "report.json")
            print(f"\n== conformance: {info['name']} {' '.join(options)}", flush=True)
            rc = conformance.run(info["path"], options, report, [])
            summary = json.load(open(report))["summary"]
            print(f"-> {summary}")
            status |= rc
    return status


if __name__ == "__main__":
    sys.exit(main())
