# xof's commands. A user needs two, on a fresh clone with nothing installed by hand:
#   make demo    import the example character and its cloth cape, simulate, save out/demo.blend + out/demo.png
#   make test    lint, type-check and run every test (creates .venv on first use)
# `make help` lists the rest.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

# The interpreter that creates the environments: Python 3.11, as Blender 4.5 and 5.0 ship.
BOOT_PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null)

VENV := .venv
VENV_LTS := .venv-lts
PY := $(VENV)/bin/python
PY_LTS := $(VENV_LTS)/bin/python
STAMP := $(VENV)/.xof-requirements
STAMP_LTS := $(VENV_LTS)/.xof-requirements
PIP := -m pip install --disable-pip-version-check --quiet

PYTEST_ARGS ?=
BENCH_ARGS ?=
BLENDER_EXT = $(firstword $(wildcard $(VENV)/lib/python3.11/site-packages/bpy/*/scripts/addons_core/bl_pkg/cli/blender_ext.py))

.PHONY: help env env-lts gltf-validator three-xloader lint format format-check mypy pytest test test-lts demo bench \
	fuzz extension reference-readers \
	fuzz-smoke fuzz-atheris fuzz-import \
	clean distclean

help:
	@echo "make demo       a walking character in a cloth cape (examples/character.x), simulated headless: out/demo.blend + out/demo.png"
	@echo "make test       ruff, mypy and every test on bpy 5.0 (.venv)"
	@echo "make test-lts   every test on the Blender 4.5 LTS bpy (.venv-lts)"
	@echo "make format     apply ruff's formatting and safe fixes (format-check: report only)"
	@echo "make extension  build the installable extension zip into build/"
	@echo "make bench      generate the benchmark inputs and run the benchmarks"
	@echo "make fuzz       fuzz the reader: 100k mutated files, figures in out/fuzz.json"
	@echo "                (fuzz-smoke: the short run in make test; fuzz-atheris; fuzz-import)"
	@echo "make reference-readers  apt-get the readers tests compare with (Assimp, Irrlicht + g++)"
	@echo "make clean      remove caches and build output; distclean also the environments"
	@echo "PYTEST_ARGS='-k name -x' narrows a test run."

# --- environments -----------------------------------------------------------------------------
# Each is created once; the stamp records which requirements it holds, so editing a
# requirements file re-syncs it. `make distclean` removes them for a rebuild from scratch.

define ensure_venv
	@if ! "$(1)/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null; then \
	  if [ -z "$(BOOT_PYTHON)" ]; then echo "error: python3.11 (or a python3 that is 3.11) is needed" >&2; exit 1; fi; \
	  if ! "$(BOOT_PYTHON)" -c 'import sys; assert sys.version_info[:2] == (3, 11)'; then \
	    echo "error: $(BOOT_PYTHON) is not Python 3.11; set BOOT_PYTHON=/path/to/python3.11" >&2; exit 1; \
	  fi; \
	  echo "creating $(1) with $(BOOT_PYTHON)"; \
	  "$(BOOT_PYTHON)" -m venv --clear "$(1)"; \
	fi
endef

$(STAMP): requirements-dev.txt requirements-fuzz.txt
	$(call ensure_venv,$(VENV))
	@echo "installing requirements-dev.txt into $(VENV) (bpy is ~1 GB the first time)"
	$(PY) $(PIP) -r requirements-dev.txt
	@$(PY) $(PIP) -r requirements-fuzz.txt 2>/dev/null \
	  || echo "note: atheris did not install; 'make fuzz' is unavailable (optional)"
	@touch $@

$(STAMP_LTS): requirements-lts.txt
	$(call ensure_venv,$(VENV_LTS))
	@echo "installing requirements-lts.txt into $(VENV_LTS)"
	$(PY_LTS) $(PIP) -r requirements-lts.txt
	@touch $@

env: $(STAMP)
env-lts: $(STAMP_LTS)

# The Khronos glTF Validator (npm, run with node) checks the batch converter's glTF output in
# the tests. Best effort: without npm, or offline, those tests skip and say why.
NODE_TOOLS := .tools/node
GLTF_VALIDATOR := gltf-validator@2.0.0-dev.3.10
VALIDATOR_STAMP := $(NODE_TOOLS)/.xof-$(GLTF_VALIDATOR)

$(VALIDATOR_STAMP):
	@if ! command -v npm >/dev/null 2>&1; then \
	  echo "note: npm is not installed; the glTF Validator tests will skip"; \
	else \
	  echo "installing $(GLTF_VALIDATOR) into $(NODE_TOOLS)"; \
	  mkdir -p $(NODE_TOOLS); \
	  if npm install --prefix $(NODE_TOOLS) --no-save --no-audit --no-fund --loglevel=error \
	      $(GLTF_VALIDATOR) >/dev/null; then touch $@; \
	  else echo "note: $(GLTF_VALIDATOR) did not install; the glTF Validator tests will skip"; fi; \
	fi

gltf-validator: $(VALIDATOR_STAMP)

# three.js's XLoader (npm three, whose last release with it is 0.124) reads the Legacy exports
# in tests/scene/export/test_export_readers.py. Best effort, as above.
THREE := three@0.124.0
THREE_TOOLS := .tools/three
THREE_STAMP := $(THREE_TOOLS)/.xof-$(THREE)

$(THREE_STAMP):
	@if ! command -v npm >/dev/null 2>&1; then \
	  echo "note: npm is not installed; the XLoader tests will skip"; \
	else \
	  echo "installing $(THREE) into $(THREE_TOOLS)"; \
	  mkdir -p $(THREE_TOOLS); \
	  if npm install --prefix $(THREE_TOOLS) --no-save --no-audit --no-fund --loglevel=error \
	      $(THREE) >/dev/null; then touch $@; \
	  else echo "note: $(THREE) did not install; the XLoader tests will skip"; fi; \
	fi

three-xloader: $(THREE_STAMP)

# --- checks ----------------------------------------------------------------------------------

# `ruff format --check` is not part of the gate: `ruff check` already enforces what matters
# (line length, imports, bugs); `make format` applies the formatting, `format-check` reports it.
lint: $(STAMP)
	$(PY) -m ruff check .

format: $(STAMP)
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

format-check: $(STAMP)
	$(PY) -m ruff format --check .

# The repository root is the extension package (`operators` imports `..addon`), so mypy checks
# it as package `xof` through a symlink in a folder outside the repository (stable per checkout,
# so mypy's cache stays valid); paths are printed repo-relative.
MYPY_ROOT := $(or $(TMPDIR),/tmp)/xof-mypy-$(shell printf %s "$(CURDIR)" | cksum | cut -d" " -f1)

mypy: $(STAMP)
	@mkdir -p "$(MYPY_ROOT)" && ln -sfn "$(CURDIR)" "$(MYPY_ROOT)/xof"
	@echo "mypy -p xof"
	@MYPYPATH="$(MYPY_ROOT)" $(PY) -m mypy --config-file pyproject.toml -p xof \
	  | sed "s|$(MYPY_ROOT)/xof/||"

# pytest exits 5 when it collected nothing: say so loudly, but that is not a failure.
define run_pytest
	@rc=0; $(1) -m pytest $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "WARNING: pytest collected no tests"; rc=0; fi; exit $$rc
endef

pytest: $(STAMP) gltf-validator three-xloader
	$(call run_pytest,$(PY))

# All three run even when one fails, so one run shows every problem; then the verdict.
test: $(STAMP)
	@failed=""; for step in lint mypy pytest; do \
	  $(MAKE) --no-print-directory $$step || failed="$$failed $$step"; done; \
	if [ -n "$$failed" ]; then echo "make test FAILED in:$$failed" >&2; exit 1; fi; \
	echo "make test: lint, mypy and pytest passed"

test-lts: $(STAMP_LTS) gltf-validator three-xloader
	@$(PY_LTS) -c 'import bpy; print("bpy", bpy.app.version_string)'
	$(call run_pytest,$(PY_LTS))

# --- user commands ---------------------------------------------------------------------------

demo: $(STAMP)
	$(PY) examples/demo.py

extension: $(STAMP)
	@mkdir -p build
	$(PY) $(BLENDER_EXT) validate .
	$(PY) $(BLENDER_EXT) build --source-dir . --output-dir build

# The benchmark inputs (BENCH_ARGS go to make_grid.py), then run.py's benchmarks; the others
# and how to read the figures: tests/bench/README.md.
bench: $(STAMP)
	$(PY) tests/bench/make_grid.py $(BENCH_ARGS)
	$(PY) tests/bench/run.py

# fuzz: the measured reader campaign (one process, bounded; report in out/fuzz.json, new bad
# inputs in out/fuzz-crashers/); fuzz-smoke: the seconds-long run `make test` includes;
# fuzz-atheris: coverage-guided (optional atheris); fuzz-import: mutated files through bpy.
FUZZ_INPUTS ?= 100000
FUZZ_SECONDS ?= 3600
fuzz: $(STAMP)
	$(PY) -m tests.fuzz.campaign --inputs $(FUZZ_INPUTS) --seconds $(FUZZ_SECONDS) \
	  --crashers out/fuzz-crashers --report out/fuzz.json

fuzz-smoke: $(STAMP)
	@$(MAKE) --no-print-directory pytest PYTEST_ARGS="tests/fuzz -q $(PYTEST_ARGS)"

fuzz-atheris: $(STAMP)
	@if ! $(PY) -c 'import atheris' 2>/dev/null; then echo "atheris is not installed" >&2; exit 1; fi
	@mkdir -p out/atheris && cd out/atheris && ../../$(PY) ../../tests/fuzz/fuzz_read.py \
	  -max_total_time=$(FUZZ_SECONDS)

fuzz-import: $(STAMP)
	$(PY) -m tests.fuzz.import_campaign --inputs 5000 --report out/fuzz-import.json

# Optional readers the tests compare our exports with (skipped with a message when missing):
# Assimp's command line and Irrlicht 1.8's .X loader (headers + library, built with g++).
# Installs with apt-get (Debian/Ubuntu, as root) what is not there yet.
REFERENCE_PACKAGES := assimp-utils libirrlicht-dev g++
reference-readers:
	@missing=""; \
	command -v assimp >/dev/null 2>&1 || missing="$$missing assimp-utils"; \
	[ -f /usr/include/irrlicht/irrlicht.h ] || missing="$$missing libirrlicht-dev"; \
	command -v g++ >/dev/null 2>&1 || missing="$$missing g++"; \
	if [ -z "$$missing" ]; then echo "reference readers: installed"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	  echo "reference readers missing:$$missing (install them with your package manager)" >&2; exit 1; fi; \
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; } >/dev/null

clean:
	rm -rf build out .mypy_cache .ruff_cache .pytest_cache .hypothesis
	find . -path ./.git -prune -o -path './.venv*' -prune -o -name __pycache__ -type d -print \
	  | xargs rm -rf

distclean: clean
	rm -rf $(VENV) $(VENV_LTS) .tools tests/bench/data
