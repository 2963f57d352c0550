"""Run by the x86_64 CPython (under an emulator on the board): compiles one
ONNX model to an ``.hbm`` with hbdk4. It imports nothing of torch_fl, whose
compiled core this interpreter cannot load, and only the standard library
besides onnx and hbdk4.

The hbdk4 calls are its compiler entry points (ONNX export to HBIR, convert
for the march, compile to .hbm); they are not exercised where torch_fl is
tested, which has no hbdk4. The artifact is written beside its final name and
renamed into place, so a cache reader never sees half of one.
"""

import argparse
import os
import sys


def _arguments(argv):
    p = argparse.ArgumentParser(prog="torch_fl.bpu._hbdk4_main")
    p.add_argument("--model", required=True)
    p.add_argument("--march", required=True)
    p.add_argument("--quantize", dest="quantize", action="store_true")
    p.add_argument("--no-quantize", dest="quantize", action="store_false")
    p.add_argument("--act-scale", type=float, required=True)
    p.add_argument("--cache", required=True)
    p.add_argument("--output", required=True)
    return p.parse_args(argv)


def _compile(args, partial):
    try:
        import onnx
        from hbdk4.compiler import compile as hbm_compile, convert
        from hbdk4.compiler.onnx import export
    except ImportError as error:
        sys.exit(f"[flagos] BPU compile: {sys.executable} cannot import hbdk4 and onnx ({error}); "
                 "FLAGOS_BPU_X86_PYTHON must name an x86_64 CPython with hbdk4 installed")
    module = export(onnx.load(args.model), name=os.path.splitext(os.path.basename(args.model))[0])
    if args.quantize:
        # Tensors the model carries no calibration for take the fallback scale;
        # without quantization hbdk4 keeps conv in float and lowers it to the CPU.
        module = convert(module, args.march, default_activation_scale=args.act_scale)
    hbm_compile(module, partial, args.march)


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    args.model, output = os.path.abspath(args.model), os.path.abspath(args.output)
    # hbdk4 leaves its intermediate files in the working directory: the cache.
    os.chdir(args.cache)
    _compile(args, output + ".partial")
    os.replace(output + ".partial", output)


if __name__ == "__main__":
    main()
