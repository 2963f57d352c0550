"""Host baselines: flagos against native CPU, measured in the same run.

``python -m tools.bench`` (from the repository root) times a tiny op and small
training steps on both devices and prints a markdown table; see
docs/performance.md. ``python -m tools.bench.gpu`` is the GPU
counterpart: flagos on the cuda plugin against native CUDA. This package must
not import torch_fl itself: under ``python -m`` a package's __init__ runs while
sys.argv[0] is still "-m", which torch_fl reads as its own CLI and then skips
plugin activation.
"""

import os

# The native side of a benchmark is "cuda" itself, not flagos under the alias
# (docs/compat.md); an explicit FLAGOS_ALIAS_CUDA wins.
os.environ.setdefault("FLAGOS_ALIAS_CUDA", "0")
