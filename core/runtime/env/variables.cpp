// The declaration tables (docs/environment-variables.md). Order, names,
// scopes, Default column text and purposes follow the reference doc,
// docs/environment-variables.md; test/python/test_env_registry.py fails when
// the two disagree. `waits_for` is the coverage ledger: "" when the behaviour
// behind a variable is implemented, else the subject it waits for. Declaring a
// variable is not implementing it.
#include "env/registry.h"

namespace flagos::env {

const std::vector<Variable>& variables() {
  static const std::vector<Variable> table = {
      // torch_fl's own additions (plugin selection; not in the upstream spec).
      {"FLAGOS_PLUGIN", Scope::Runtime, Type::String, "", "Auto-discovered", "",
       "Plugin to activate: a plugin name (host, cuda, ...) or a path to a "
       "libflagos_<name>.so. A named plugin that cannot be loaded fails the import "
       "with the real cause instead of falling back",
       "plugins", ""},
      {"FLAGOS_PLUGIN_OPTIONS", Scope::Runtime, Type::List, "", "No default", "",
       "Comma-separated key=value options handed to the plugin at load (the host "
       "plugin reads devices, strict and memory_mb; the CUDA-shaped plugins read "
       "runtime, an absolute path to the vendor runtime library)",
       "plugins", ""},
      {"FLAGOS_ACCELERATOR", Scope::Build, Type::Enum, "cuda", "cuda", "cuda,ppu,metax,ascend,tsingmicro,dcu,gcu,musa,bpu",
       "Hardware platform the wheel is built for: cuda, ppu, metax, ascend, "
       "tsingmicro, dcu, gcu, musa, or bpu. Read by setup.py alone — the wheel records "
       "it in _build_config.py, and that record, not a re-export, is what every "
       "run-time reader consults",
       "build", ""},
      {"FLAGOS_BUILD_VENDOR", Scope::Build, Type::Bool, "1", "ON, OFF on metax", "",
       "Compile the accelerator vendor's native kernels (a no-op where the vendor "
       "ships none: cuda, dcu, ppu, bpu). TsingMicro builds its host-draw RNG kernels "
       "here and pins the switch ON: register.cc claims those symbols unconditionally. "
       "MetaX defaults OFF because its native path is retired — that platform's "
       "accelerated ops are its FlagGems routes, with the rest on cpu_fallback",
       "build", "",
       "ascend's aclnn kernels, simulated runtime only; the other vendors' plugins carry no native kernels yet"},
      {"FLAGOS_BUILD_FLAGGEMS", Scope::Build, Type::Bool, "1", "ON, OFF on bpu", "",
       "Compile the FlagGems Python kernel wrappers (calls into Python, no C++ "
       "linking). Set OFF for a runtime-only build with no FlagGems routes (bpu)",
       "build", ""},
      {"FLAGOS_BUILD_BOXING", Scope::Build, Type::Bool, "0", "OFF", "",
       "Compile the generated CUDA boxing kernels, the CUDA-ABI vendor path. OFF on "
       "every platform by default: the default wheel is FlagGems-primary (routed ops "
       "go to FlagGems, the rest to cpu_fallback) and depends on no vendor torch "
       "package. Set FLAGOS_BUILD_BOXING=1 (or -DFLAGOS_BUILD_BOXING=ON) to build a "
       "boxing wheel that reuses the vendor's CUDA-ABI kernels",
       "build", ""},
      {"FLAGOS_BUILD_FLAGGEMS_CPP", Scope::Build, Type::Bool, "1", "ON on cuda, off elsewhere", "",
       "Compile the FlagGems C++ wrapper, which links liboperators.so. Defaults OFF "
       "outside cuda because that library has to be built for the vendor's own toolkit "
       "and pointed at with FLAGGEMS_DIR; a build with one may turn this ON explicitly "
       "(MetaX's MACA build is the case). Pinned OFF for dcu, musa and bpu, where no "
       "such library exists at all; tsingmicro defaults OFF for the same reason and "
       "does not pin it",
       "build", ""},
      {"FLAGOS_BUILD_TILEOPS", Scope::Build, Type::Bool, "1", "ON on cuda, OFF elsewhere", "",
       "Compile the TileOps kernel wrappers, which are TileLang on SM90 NVIDIA parts "
       "only",
       "build", ""},
      {"FLAGOS_BUILD_JOBS", Scope::Build, Type::Int, "", "System CPU count", "",
       "Parallel jobs for the CMake build. MAX_JOBS and CMAKE_BUILD_PARALLEL_LEVEL are "
       "honoured as lower-priority fallbacks",
       "build", ""},
      {"FLAGOS_WHEEL_LOCAL", Scope::Build, Type::String, "", "The platform's wheel_local from cmake/flagos_platforms.json", "",
       "Local version label for the wheel — the SDK it was built against, spelled as "
       "the vendor's own wheels spell it (2.10.0+cuda13.3, 2.10.0+dtk2604, "
       "2.10.0+musa5.2.0). It names the build variant, not the publishing target: each "
       "platform publishes to exactly one lane, so the lane is implied and is not in "
       "the filename. A vendor with more than one SDK would otherwise produce two "
       "incompatible wheels under one name. Overriding it is for a dev build that must "
       "pin something else; the release artifacts take the table's value, so the name "
       "is a property of the platform rather than of the build script",
       "build", ""},
      {"FLAGOS_WHEEL_PRERELEASE", Scope::Build, Type::String, "", "Unset", "",
       "PEP 440 pre-release suffix for the wheel version (rc1, a1, b1), for cutting a "
       "release candidate. The release workflow sets it from the tag, so v2.10.0rc1 "
       "produces torch_fl-2.10.0rc1+cuda13.3; PEP 440 sorts that below 2.10.0, so pip "
       "install torch_fl==2.10.0 does not pick the candidate up. Anything that is not "
       "a pre-release suffix is refused rather than guessed at",
       "build", ""},
      {"FLAGOS_SKIP_CUDA_ASSETS", Scope::Build, Type::Bool, "0", "0 (off)", "",
       "Do not bundle an external libtorch_cuda.so into the wheel, for in-tree builds. "
       "The build-time counterpart of FLAGOS_DISABLE_CUDA_ASSETS",
       "build", "",
       "the CUDA runtime libraries of the cuda plugin wheel; no libtorch_cuda.so: docs/platforms/cuda.md, "
       "\"CUDA assets\""},
      {"FLAGOS_CUDA_ASSETS_DIR", Scope::Build, Type::Path, ".libtorch_cuda_assets", ".libtorch_cuda_assets", "",
       "Directory the external libtorch_cuda.so is copied from when bundling. A "
       "missing directory downgrades to a warning: the wheel then needs a "
       "runtime-supplied libtorch_cuda.so",
       "build", "",
       "the CUDA runtime libraries of the cuda plugin wheel; no libtorch_cuda.so: docs/platforms/cuda.md, "
       "\"CUDA assets\""},
      {"FLAGOS_PPU_MKL_DIR", Scope::Build, Type::Path, "/usr/local/lib", "/usr/local/lib", "",
       "Directory the PPU libtorch bundling script takes MKL from",
       "build", "", "simulated runtime only"},
      {"FLAGOS_DCU_VENDOR_CORE", Scope::BuildAndRuntime, Type::Bool, "0", "0 (off)", "",
       "Use DTK's forked core libraries instead of the official PyTorch core. Must "
       "match at build and import time. See DCU without DTK's core libraries",
       "build", "", "simulated runtime only"},
      {"FLAGOS_BACKEND_CONFIG", Scope::Runtime, Type::Path, "", "No default", "",
       "Absolute path to a backends_*.conf file; overrides the conf torch_fl selects "
       "from the build record. For testing and debugging only — the wheel's own "
       "selection is not written here, and is reported by "
       "torch_fl.backend_config_path()",
       "routing", ""},
      {"FLAGOS_FORCE_BACKEND", Scope::Runtime, Type::Enum, "", "No default (off)", "flaggems,vendor,tileops",
       "Repin every op onto one backend family for A/B measurement: flaggems, vendor, "
       "or tileops. An op the target does not implement is reported on stderr and left "
       "on its configured backend; an op it does implement but this wheel did not "
       "compile raises rather than falling back. The tileops mode repins the ops the "
       "conf annotates # tileops and additionally needs the tileops package, an SM90 "
       "device and a FLAGOS_BUILD_TILEOPS=ON build",
       "routing", ""},
      {"FLAGOS_DISABLE_FLAGGEMS_PY", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Leave the FlagGems Python layer unregistered (C++ stub-only mode)",
       "routing", ""},
      {"FLAGOS_STARTUP_PROFILE", Scope::Runtime, Type::Enum, "full", "full", "full,minimal",
       "full activates framework compatibility hooks during import; minimal leaves "
       "those hooks for explicit activation. FlagTree, FlagGems, and FlagCX remain "
       "required in both profiles",
       "routing", ""},
      {"FLAGOS_LOG", Scope::Runtime, Type::List, "", "No default (all off)", "dispatch,fallback,op_cache,plugin",
       "Comma-separated stderr diagnostics: dispatch (backend chosen per operator), "
       "fallback (each cpu_fallback dispatch), op_cache (Ascend operator-cache "
       "hit/miss statistics), plugin (which plugin import activates, and why). An entry "
       "naming none of these is reported once per process rather than silently ignored",
       "logging", "", "op_cache: ascend's aclnn executor cache, simulated runtime only"},
      {"FLAGOS_TRACE", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Verbose logging in the device profiler shim compiled into this build. One "
       "switch covers every accelerator: exactly one device tracer is compiled per "
       "build, so the name is never ambiguous",
       "logging", ""},
      {"FLAGOS_TRACER_LIBRARY", Scope::Runtime, Type::Path, "", "Auto-discovered", "",
       "Override the tracer library the profiler shim dlopens, when the default path "
       "does not match the installed driver",
       "logging", "",
       "the activity tracer of the cuda and ppu plugins (CUPTI) and the musa plugin (MUPTI); cuda on an "
       "H200, ppu and musa on simulated runtimes only: docs/profiler.md, \"The CUDA-shaped plugins' tracer\""},
      {"FLAGOS_KUNLUNXIN_XDNN_LIB_DIR", Scope::Runtime, Type::Path, "", "No default", "",
       "Colon-separated directories holding the component libraries libxdnn_pytorch.so "
       "names in DT_NEEDED (libxpu_blas.so, libxpu_dnn.so, libxpu_flash_attention.so). "
       "The vendor torch package ships them as <site-packages>/torch_xmlir/*.so; "
       "importing that Python package is not required. Set it and put the same "
       "directories on LD_LIBRARY_PATH before starting the interpreter — the loader "
       "resolves DT_NEEDED before any of the wheel's code runs, so the variable alone "
       "cannot rescue a first import that fails with libxpu_blas.so: cannot open "
       "shared object file. The wheel loads the XPU SDK's CUDA-compat runtime "
       "(libxpucuda.so, libcudart.so.12, libxpurt.so.2) before these components, "
       "because libxpu_blas.so resolves cudaGetDriverEntryPoint out of the global "
       "scope rather than through its own DT_NEEDED",
       "vendor-libraries", "a kunlunxin vendor plugin"},
      {"FLAGOS_DIST_REDIRECT_GLOO", Scope::Runtime, Type::Bool, "1", "1 (on)", "",
       "Answer a plain init_process_group(backend=\"gloo\") or new_group request with "
       "the flagos backend when the process accelerator is the flagos device. "
       "torch.distributed routes any device type it does not recognise to gloo, and a "
       "ProcessGroupGloo rejects flagos tensors with unsupported device type flagos "
       "(#263). Set 0 to keep the requested backend",
       "distributed", ""},
      {"FLAGOS_DIST_STAGED_GLOO", Scope::Runtime, Type::Bool, "1", "1 (on)", "",
       "Allow the host-staged gloo inner backend: the last fallback tier of the "
       "\"flagos\" backend when no vendor communicator (FlagCX/NCCL/HCCL/MCCL) is "
       "available. It needs no vendor library at all but copies every flagos operand "
       "device->host->device per collective. Set 0 to fail loudly instead of staging. "
       "One warning is emitted the first time a group is built on this tier",
       "distributed", ""},
      {"FLAGOS_ALIAS_CUDA", Scope::Runtime, Type::Bool, "1", "1 (on)", "",
       "Alias the cuda device string to flagos for drop-in compatibility. Set 0 to opt "
       "out",
       "vendor-shims", ""},
      {"FLAGOS_DISABLE_CUDA_SHIM", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Skip registering the torch.cuda compatibility shim for generic GPU operations",
       "vendor-shims", ""},
      {"FLAGOS_METAX_CUDART_SHIM", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Preload the libcudart version-tag shim before import torch. Required for MetaX "
       "with generic PyTorch wheels",
       "vendor-shims", "", "simulated runtime only"},
      {"FLAGOS_METAX_COMPAT", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Patch FlagGems torch.cuda device queries for MetaX compatibility",
       "vendor-shims", "", "simulated runtime only"},
      {"FLAGOS_DCU_HIP_VERSION", Scope::Runtime, Type::String, "", "No default", "",
       "Override HIP version detection for the DCU runtime",
       "vendor-shims", "", "simulated runtime only"},
      {"FLAGOS_DCU_SKIP_RUNTIME_CHECK", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Skip the DCU post-import checks (torch/DTK version alignment and CUDA-key "
       "kernel presence), for deliberately testing a non-matching wheel pair",
       "vendor-shims", "", "simulated runtime only"},
      {"FLAGOS_DCU_SDPA_FLASH", Scope::Runtime, Type::Bool, "1", "1 (on)", "",
       "On DCU, point DTK's SDPA selector at its CUTLASS flash adapter when the stack "
       "has one, instead of forcing the math decomposition. A stack without DTK's "
       "flash-attn library falls back to math on its own. Set 0 to force math "
       "everywhere. This is a capability switch, not a route switch: "
       "scaled_dot_product_attention stays a cuda route in backends_dcu.conf, and "
       "FLAGOS_OP_scaled_dot_product_attention=flaggems is the (measured-slower) "
       "FlagGems alternative",
       "vendor-shims", "the dcu vendor-torch pairing (the SDPA selector it points is DTK's torch's)"},
      {"FLAGOS_DISABLE_APEX_COMPAT", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Disable the optional Apex multi-tensor compatibility layer; see the Apex note "
       "below",
       "vendor-shims", ""},
      {"FLAGOS_DISABLE_QWENIMAGE_ROPE", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Leave diffusers' Qwen-Image rotary-embedding table alone. torch_fl registers "
       "the flagos device there at import on GCU and on Ascend, which is what keeps "
       "the rotation off the complex exponential diffusers would otherwise fall back "
       "to; set 1 to measure that difference. This is a capability switch, not a route "
       "switch: it changes which rotation diffusers calls, not which backend serves "
       "any operator — see the Qwen-Image note below",
       "vendor-shims", "", "simulated runtime only"},
      {"FLAGOS_DIST_FORCE_NCCL", Scope::Test, Type::Bool, "0", "0 (off)", "",
       "In the manual MetaX distributed tests, skip FlagCX and use NCCL",
       "vendor-shims", "", "stand-in FlagCX only"},
      {"FLAGOS_DCU_SKIP_LEGACY_SMOKE", Scope::Test, Type::Bool, "0", "0 (off)", "",
       "In .github/scripts/set_env_dcu.sh, skip the legacy-mode smoke path "
       "(FLAGOS_DCU_VENDOR_CORE=1) after the decoupled gates have run",
       "vendor-shims", "", "simulated runtime only"},
      {"FLAGOS_DISABLE_FLEX_ATTENTION_COMPAT", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Leave torch.nn.attention.flex_attention's hard-coded {cuda, cpu, xpu, hpu} "
       "device gate alone, so a flagos tensor is refused at the entry point as it is "
       "upstream. Set 1 to measure a platform against that gate unchanged; see the "
       "Flex Attention note below",
       "framework-shims", ""},
      {"FLAGOS_DISABLE_CUDA_ASSETS", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Skip preloading the bundled libtorch_cuda.so and CUDA libraries, for builds "
       "that use system libtorch",
       "runtime-libraries", "",
       "the CUDA runtime libraries of the cuda plugin wheel; no libtorch_cuda.so: docs/platforms/cuda.md, "
       "\"CUDA assets\""},
      {"FLAGOS_VENDOR_TORCH_LIB", Scope::BuildAndRuntime, Type::Path, "", "Auto-discovered", "",
       "Path to the vendor torch's lib directory, used when no bundled "
       "lib_maca/lib_dcu/lib_ppu is present. Only the active accelerator's build reads "
       "it",
       "runtime-libraries", "", "simulated runtime only"},
      {"FLAGOS_USE_CACHING_ALLOCATOR", Scope::Runtime, Type::Bool, "1", "1 (on)", "",
       "Caching device allocator. Set 0 to hand every allocation straight to the "
       "vendor runtime",
       "runtime-libraries", ""},
      {"FLAGOS_USE_FLAGTREE", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Assert that a FlagTree build is the active Triton. Required on Ascend when the "
       "compiler is FlagTree: the check fails loudly if the installed Triton is not "
       "FlagTree",
       "compile", ""},
      {"FLAGOS_COMPILE_FALLBACK_EAGER", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Fall back to eager mode when torch.compile encounters unsupported operations",
       "compile", ""},
      {"FLAGOS_TILEOPS_USE_L2", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Use the TileOps L2-cache tier",
       "compile", ""},
      {"FLAGOS_TILEOPS_CACHE_MAX", Scope::Runtime, Type::Int, "512", "512", "",
       "TileOps instance-cache capacity. Past the cap, results are rebuilt per call: "
       "slower but bounded",
       "compile", ""},
      {"FLAGOS_TILEOPS_DISABLE_ALL_CACHE", Scope::Runtime, Type::Bool, "0", "0 (off)", "",
       "Neutralize every TileLang cache. Correct but slow; must be set before tileops "
       "is imported. Sets TILELANG_DISABLE_CACHE=1",
       "compile", ""},
      {"FLAGOS_TILEOPS_FULL", Scope::Test, Type::Bool, "0", "0 (off)", "",
       "In the TileOps codegen tests, run the full manifest workload shape instead of "
       "the small one",
       "compile", ""},
      {"FLAGOS_EXEC_CACHE", Scope::Codegen, Type::Bool, "1", "1 (on)", "",
       "Cache Ascend operator-codegen execution results; 0 forces regeneration",
       "codegen", "", "measured on the simulated CANN runtime only"},
      {"FLAGOS_CODEGEN_ALL", Scope::Codegen, Type::Bool, "0", "0 (off)", "",
       "Generate routes for the full leaf-CUDA operator set rather than the supported "
       "subset",
       "codegen", ""},
      {"FLAGOS_BPU_MARCH", Scope::Runtime, Type::Enum, "nash-p", "nash-p", "nash-p,nash-e,nash-m",
       "BPU micro-architecture. nash-p is the BPU, nash-e the S100 and nash-m the "
       "S100P",
       "bpu", "", "simulated runtime only"},
      {"FLAGOS_BPU_CACHE", Scope::Runtime, Type::Path, "~/.cache/torch_fl_bpu", "~/.cache/torch_fl_bpu", "",
       "Directory holding the BPU compiler cache",
       "bpu", "", "simulated runtime only"},
      {"FLAGOS_BPU_QUANTIZE", Scope::Runtime, Type::Bool, "1", "1 (on)", "",
       "Quantize BPU kernels. Without it hbdk4 keeps conv in float and lowers it to "
       "the CPU, so the BPU never runs the heavy work",
       "bpu", "", "simulated runtime only"},
      {"FLAGOS_BPU_ACT_SCALE", Scope::Runtime, Type::Float, "0.05", "0.05", "",
       "Fallback activation scale for tensors with no calibration entry",
       "bpu", "", "simulated runtime only"},
      {"FLAGOS_BPU_MLIR_LIBS", Scope::Runtime, Type::Path, "", "Unset", "",
       "Directory of the BPU MLIR plugin libraries (libhbtl.so), preloaded by the x86 "
       "compile driver",
       "bpu", "", "simulated runtime only"},
      {"FLAGOS_BPU_X86_PYTHON", Scope::Runtime, Type::Path, "", "Unset", "",
       "An x86_64 CPython with hbdk4 installed, run under an emulator: hbdk4 ships "
       "x86_64-only wheels",
       "bpu", "", "simulated runtime only"},
      {"FLAGOS_BPU_X86_EMULATOR", Scope::Runtime, Type::Path, "", "Unset", "",
       "BPU x86_64 emulator binary. Useful because the distro box64 is usually too old "
       "for hbdk4, or the user has one that is not in PATH",
       "bpu", "", "simulated runtime only"},
      {"FLAGOS_BPU_X86_STUBS", Scope::Runtime, Type::Path, "", "<x86 python prefix>/../stubs", "",
       "Directory of import-only stand-ins for numba and torch, which hbdk4's ONNX "
       "entry point imports unconditionally",
       "bpu", "", "simulated runtime only"},
  };
  return table;
}

const std::vector<Family>& families() {
  static const std::vector<Family> table = {
      {"FLAGOS_OP_", "<name>", Scope::Runtime, "No default",
       "Per-operator backend override (e.g. FLAGOS_OP_add__Tensor=cuda); replace . "
       "with __ in op names",
       "routing", ""},
  };
  return table;
}

const std::vector<Foreign>& foreign() {
  static const std::vector<Foreign> table = {
      {"GEMS_VENDOR", "", "FlagGems", Direction::SetIfUnset, "Set if unset",
       "FlagGems' own vendor selector (nvidia, metax, hygon, ascend, mthreads, "
       "enflame, …). torch_fl fills it from the detected hardware or the build record "
       "so FlagGems does not have to guess. An explicit value torch_fl cannot "
       "configure raises RuntimeError at import torch_fl instead of being silently "
       "passed on"},
      {"TORCH_DEVICE_BACKEND_AUTOLOAD", "", "PyTorch", Direction::SetIfUnset, "Set if unset",
       "torch's device-backend entry-point autoload. torch_fl's entry point makes "
       "import torch import torch_fl (0 turns that off); torch_fl sets it to 0 on MUSA "
       "builds so vendor plugins (e.g. torch_musa) do not claim PrivateUse1 during "
       "import torch"},
      {"TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "", "PyTorch", Direction::SetIfUnset, "Set if unset",
       "Inductor's choice between its static Triton launcher and Triton's own. "
       "torch_fl sets it to 0 on a build without torch._C._StaticCudaLauncher (the CPU "
       "torch wheel this build pairs with an external libtorch_cuda.so), because a "
       "torch.compile that does not name the flagos backend otherwise dies before "
       "generating a kernel - see the static-launcher note below"},
      {"FLAGCX_TORCH_BACKEND", "", "FlagCX", Direction::SetIfUnset, "Set if unset",
       "FlagCX's torch plugin selector; torch_fl sets flagos"},
      {"TILELANG_DISABLE_CACHE", "", "tilelang", Direction::SetIfUnset, "Set if unset",
       "tilelang's kernel cache. FLAGOS_TILEOPS_DISABLE_ALL_CACHE=1 sets it to 1"},
      {"TRITON_ENABLE_TASKQUEUE", "", "FlagTree / torch_npu", Direction::SetIfUnset, "Set if unset",
       "The FlagTree Ascend Triton launch queue, on by default upstream. torch_fl "
       "turns it off so an unsupported async launch fails with a clear message instead "
       "of a silent override"},
      {"COMPILE_ARCH", "", "Enflame tops", Direction::SetIfUnset, "Set if unset",
       "The Enflame compiler's target architecture, derived from the installed GCU"},
      {"HB_DNN_USER_DEFINED_L2M_SIZES", "", "Horizon hbdk", Direction::SetIfUnset, "Set if unset",
       "The BPU runtime's L2 memspace sizing, set before first inference"},
      {"FLAGGEMS_DIR", "", "FlagGems", Direction::Read, "Read",
       "FlagGems CMake config directory (FlagGemsConfig.cmake); auto-detected from the "
       "installed flag_gems when unset"},
      {"FLAGGEMS_SOURCE_DIR", "", "FlagGems", Direction::Read, "Read",
       "Absolute path to the FlagGems source directory (Python Triton kernels); "
       "required when the FlagGems C++ runtime is active, and must match the revision "
       "liboperators.so was built against"},
      {"TORCHINDUCTOR_COMPILE_THREADS", "", "PyTorch", Direction::SetIfUnset, "Set if unset",
       "Inductor's compile-thread pool size, and the long form of "
       "config.compile_threads. torch_fl sets it to 1 on the vendor compilers that "
       "must not compile in a forked worker (GCU, PPU, and MThreads FlagTree on MUSA), "
       "because a torch.compile that does not name the flagos backend otherwise spawns "
       "compile_worker subprocesses that never import torch_fl - see the "
       "compile-threads note below. An explicit export still wins"},
      {"CUDA_HOME", "", "NVIDIA / conda", Direction::Read, "Read",
       "CUDA toolkit root for FLAGOS_ACCELERATOR=cuda and ppu. Defaults to system "
       "CUDA, else $CONDA_PREFIX/targets/x86_64-linux"},
      {"CONDA_PREFIX", "", "conda", Direction::Read, "Read",
       "Conda environment prefix, the CUDA discovery fallback"},
      {"ASCEND_HOME", "", "Huawei CANN", Direction::Read, "Read",
       "CANN toolkit path for Ascend NPU builds "
       "(/usr/local/Ascend/ascend-toolkit/latest)"},
      {"KUIPER_PATH", "", "TsingMicro Kuiper", Direction::Read, "Read",
       "Kuiper SDK path for TsingMicro (/usr/local/kuiper); the tsingmicro plugin "
       "searches $KUIPER_PATH/lib for libhpgr.so"},
      {"MUSA_HOME", "", "Moore Threads", Direction::Read, "Read",
       "MUSA toolkit path (/usr/local/musa)"},
      {"MACA_PATH", "MACA_HOME", "MetaX", Direction::Read, "Read",
       "MetaX SDK path (/opt/maca)"},
      {"TOPS_HOME", "", "Enflame", Direction::Read, "Read",
       "TopsRider SDK path for GCU builds (/opt/tops)"},
      {"ROCM_PATH", "", "Hygon DTK", Direction::Read, "Read",
       "DTK path for DCU builds (/opt/dtk)"},
      {"PPU_SDK", "", "PPU", Direction::Read, "Read",
       "PPU SDK path (/usr/local/PPU_SDK); its CUDA toolkit is $PPU_SDK/CUDA_SDK"},
      {"TOPSATEN_LIB", "", "Enflame", Direction::Read, "Read",
       "Enflame topsaten library override; otherwise discovered under $TOPS_HOME"},
      {"MUDNN_LIB", "", "Moore Threads", Direction::Read, "Read",
       "MUSA kernel-library override; otherwise discovered under $MUSA_HOME/lib"},
      {"TRITON_GCU_PATH", "", "Enflame Triton", Direction::Read, "Read",
       "Vendor Triton/compiler root for GCU (/opt/triton_gcu)"},
      {"TSM_PROFILER_EN", "", "Kuiper hpgr", Direction::Read, "Read by hpgr",
       "Enables tx* runtime API interception. Without it rocprofiler sees no launches "
       "and the TsingMicro profiler tool receives no kernel dispatches"},
      {"ROCP_TOOL_LIBRARIES", "", "rocprofiler-sdk", Direction::Read, "Read by rocprofiler",
       "Names the tool library rocprofiler loads. On TsingMicro this is "
       "torch_fl/lib/libtorch_fl_profiler.so; the tracer dlopens the same library by "
       "name"},
  };
  return table;
}

const std::vector<Retired>& retired() {
  static const std::vector<Retired> table = {
      {"ACCELERATOR", "FLAGOS_ACCELERATOR", "FLAGOS_ACCELERATOR, and _build_config.py at run time"},
      {"VENDOR_KERNEL", "FLAGOS_BUILD_VENDOR", "the FLAGOS_BUILD_* switches"},
      {"FLAGGEMS_KERNEL", "FLAGOS_BUILD_FLAGGEMS", "the FLAGOS_BUILD_* switches"},
      {"BOXING_KERNEL", "FLAGOS_BUILD_BOXING", "the FLAGOS_BUILD_* switches"},
      {"FLAGGEMS_CPP", "FLAGOS_BUILD_FLAGGEMS_CPP", "the FLAGOS_BUILD_* switches"},
      {"TILEOPS_KERNEL", "FLAGOS_BUILD_TILEOPS", "the FLAGOS_BUILD_* switches"},
      {"ALL_USE_FLAGGEMS", "FLAGOS_FORCE_BACKEND", "FLAGOS_FORCE_BACKEND"},
      {"ALL_USE_VENDOR", "FLAGOS_FORCE_BACKEND", "FLAGOS_FORCE_BACKEND"},
      {"FLAGOS_USE_TILEOPS", "FLAGOS_FORCE_BACKEND", "FLAGOS_FORCE_BACKEND"},
      {"FLAGOS_LOG_DISPATCH", "FLAGOS_LOG", "FLAGOS_LOG"},
      {"FLAGOS_LOG_FALLBACK", "FLAGOS_LOG", "FLAGOS_LOG"},
      {"FLAGOS_CACHE_STATS", "FLAGOS_LOG", "FLAGOS_LOG"},
      {"FLAGOS_CUPTI_SHIM_DEBUG", "FLAGOS_TRACE", "FLAGOS_TRACE"},
      {"FLAGOS_MUPTI_DEBUG", "FLAGOS_TRACE", "FLAGOS_TRACE"},
      {"FLAGOS_MSPTI_DEBUG", "FLAGOS_TRACE", "FLAGOS_TRACE"},
      {"FLAGOS_TOPSPTI_DEBUG", "FLAGOS_TRACE", "FLAGOS_TRACE"},
      {"FLAGOS_ROCTRACER_DEBUG", "FLAGOS_TRACE", "FLAGOS_TRACE"},
      {"FLAGOS_KINETO_SHIM_DEBUG", "FLAGOS_TRACE", "FLAGOS_TRACE"},
      {"FLAGOS_CUPTI_LIBRARY", "FLAGOS_TRACER_LIBRARY", "FLAGOS_TRACER_LIBRARY"},
      {"FLAGOS_MUPTI_LIBRARY", "FLAGOS_TRACER_LIBRARY", "FLAGOS_TRACER_LIBRARY"},
      {"FLAGOS_TOPSPTI_LIBRARY", "FLAGOS_TRACER_LIBRARY", "FLAGOS_TRACER_LIBRARY"},
      {"FLAGOS_MACA_TORCH_LIB", "FLAGOS_VENDOR_TORCH_LIB", "FLAGOS_VENDOR_TORCH_LIB"},
      {"FLAGOS_DCU_TORCH_LIB", "FLAGOS_VENDOR_TORCH_LIB", "FLAGOS_VENDOR_TORCH_LIB"},
      {"FLAGOS_PPU_TORCH_LIB", "FLAGOS_VENDOR_TORCH_LIB", "FLAGOS_VENDOR_TORCH_LIB"},
      {"FLAGOS_USE_FLAGGEMS", "", "nothing — a conf is no longer selected by a variable, and whether the FlagGems "
       "C++ runtime exists is a property of the build record"},
      {"FLAGOS_USE_FLAGGEMS_CPP", "", "nothing — a conf is no longer selected by a variable, and whether the FlagGems "
       "C++ runtime exists is a property of the build record"},
      {"FLAGOS_USE_VENDOR_OPS", "", "nothing"},
  };
  return table;
}

}  // namespace flagos::env
