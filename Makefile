# The two commands: `make demo` and `make test`. Both set up what is missing
# first (`make setup`), and are quick when nothing changed.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
APT_PACKAGES := g++ cmake ninja-build ccache catch2 libspdlog-dev libtomlplusplus-dev libboost-dev clang
PY_PACKAGES := torch==2.13.0 scikit-build-core pytest numpy expecttest diffusers transformers accelerate auditwheel
SOURCES := $(shell find CMakeLists.txt pyproject.toml cmake confs core plugins include tools test/fake_plugins test/cpp test/abi test/simrt python/_torch_fl_startup.py python/_torch_fl_bundle.py python/torch_fl_startup.pth -type f -not -name '*.pyc' 2>/dev/null)
STAMP := build/.stamps
# Build-scope variables select a different build: a change to any of them
# (or to confs/) must rebuild even when no source file changed.
BUILD_VARS := FLAGOS_ACCELERATOR|FLAGOS_BUILD_[A-Z_]+|FLAGOS_WHEEL_[A-Z_]+|FLAGOS_SKIP_CUDA_ASSETS|FLAGOS_CUDA_ASSETS_DIR|FLAGOS_PPU_MKL_DIR|FLAGOS_DCU_VENDOR_CORE|FLAGOS_VENDOR_TORCH_LIB|MAX_JOBS|CMAKE_BUILD_PARALLEL_LEVEL
BUILD_ENV := $(STAMP)/env-$(shell env | grep -E '^($(BUILD_VARS))=' | sort | md5sum | cut -c1-16)

.PHONY: setup demo test test-cpp test-python clean sanitize sanitize-thread fuzz

setup: $(STAMP)/installed

$(STAMP)/apt:
	@mkdir -p $(STAMP)
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "[setup] installing Debian packages:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@touch $@

$(STAMP)/venv: $(STAMP)/apt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "[setup] Python packages: $(PY_PACKAGES)"
	@$(PY) -m pip install -q --disable-pip-version-check $(PY_PACKAGES)
	@touch $@

# Editable install: scikit-build-core builds into build/<wheel tag> (kept
# between runs, with ccache, so rebuilds are incremental). The C++ tests and
# fake plugins are on here; a plain `pip install .` leaves them out.
$(BUILD_ENV):
	@mkdir -p $(STAMP) && rm -f $(STAMP)/env-* && touch $@

$(STAMP)/installed: $(STAMP)/venv $(BUILD_ENV) $(SOURCES)
	@echo "[setup] building torch_fl (editable)"
	@$(PY) -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
		-C cmake.define.FLAGOS_BUILD_TESTS=ON -e .
	@touch $@

demo: setup
	@$(PY) tools/demo.py

# The suites are independent processes: one per core, each suite in two
# shards, so that the longest ones end together.
test: setup
	@$(PY) test/run_all.py --jobs $(shell nproc) --shards 2

# Sanitizer runs (tools/sanitize): own builds under build/sanitize*/ with the
# runtime preloaded into Python; the editable install is left as it is.
# ASan+UBSan: Catch2, the torch-level suite (normal and strict host), OpInfo on
# cpu_fallback. TSan: the allocator's Catch2 tests, the stream, event and memory
# tests, then the rest of the torch-level suite but OpInfo.
sanitize: $(STAMP)/venv
	@$(PY) -m tools.sanitize address

sanitize-thread: $(STAMP)/venv
	@$(PY) -m tools.sanitize thread

# The libFuzzer targets (test/fuzz) for FUZZ_SECONDS each; they need clang
# (apt-get install clang).
FUZZ_SECONDS ?= 300
fuzz: $(STAMP)/apt
	@CC=clang CXX=clang++ cmake -S test/fuzz -B build/fuzz/tree -G Ninja >/dev/null
	@cmake --build build/fuzz/tree
	@mkdir -p build/fuzz/artifacts build/fuzz/corpus_conf build/fuzz/corpus_env
	@build/fuzz/tree/fuzz_conf -max_total_time=$(FUZZ_SECONDS) -timeout=10 -dict=test/fuzz/conf.dict \
	  -artifact_prefix=build/fuzz/artifacts/fuzz_conf- build/fuzz/corpus_conf test/fuzz/corpus/conf
	@build/fuzz/tree/fuzz_env -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	  -artifact_prefix=build/fuzz/artifacts/fuzz_env- build/fuzz/corpus_env test/fuzz/corpus/env

clean:
	rm -rf build
