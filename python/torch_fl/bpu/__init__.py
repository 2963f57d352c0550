"""The BPU (Horizon Robotics) compile path (docs/bpu-compile.md).

A model reaches the BPU as an ``.hbm`` that hbdk4 compiles. hbdk4 ships
x86_64-only wheels, so on the board (aarch64) the compile runs an x86_64
CPython under an x86_64 emulator:

  settings        the FLAGOS_BPU_* variables, typed and checked;
  compile_driver  the command line and environment hbdk4 runs with, the
                  cache of compiled artifacts, and the run itself;
  _hbdk4_main     the script the x86_64 CPython runs: it alone imports hbdk4.

hbdk4 is not part of this repository and is not installed where torch_fl is
tested: the driver is tested against a stand-in compiler that records what it
was given, and the hbdk4 calls in _hbdk4_main are unverified against hbdk4.
The BPU runtime's own variable, HB_DNN_USER_DEFINED_L2M_SIZES, is filled at
import with the other vendor variables (torch_fl._platform_env).
"""
