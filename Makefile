# The two set-up commands of the README. Each creates .venv when missing and installs what it needs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-engines bench fuzz clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# setuptools' "Editable installation ... folders with the same name as your package" notice (a boxed warning on
# every editable install of a package-dir mapping) is filtered: it says nothing about this project's layout
EDITABLE := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/pip install -q -e

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(EDITABLE) '.[schema]'
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(EDITABLE) '.[dev]'
	$(BIN)/pip install -q --no-deps bfcl-eval==2026.3.23  # BFCL v4's data for the eval tests, not its runners
	touch $@ $(VENV)/.demo-installed

demo: $(VENV)/.demo-installed
	$(BIN)/toolwire demo

test: $(VENV)/.dev-installed
	$(BIN)/python -m pytest -n 2 --durations=15

# The bounded coverage-guided fuzz step (docs/fuzzing.md): FUZZ_SECONDS over the three family groups.
FUZZ_SECONDS ?= 20
FUZZ_RUNS ?=
fuzz: $(VENV)/.dev-installed
	$(BIN)/python tests/fuzz/run_atheris.py --seconds $(FUZZ_SECONDS) $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS)) --out fuzz-atheris-failures.jsonl

# vLLM and SGLang adapters against the engines' real classes, in their own venv (tests_engines/setup_venv.sh
# lists what it installs); not part of `make test`, whose collection is tests/ only
# vLLM 0.33 + SGLang in ENGINES_VENV (everything), vLLM 0.34 in ENGINES_VENV_NEXT (over the same packages): the
# version-sensitive tests, the adapter tests on qwen3's vectors and the serving tests of two families
ENGINES_VENV := .engines-venv
ENGINES_VENV_NEXT := $(ENGINES_VENV)-vllm034
PYTEST_ENGINES := -m pytest -o addopts="" -q -p no:cacheprovider -W ignore::DeprecationWarning

$(ENGINES_VENV)/.ready: tests_engines/setup_venv.sh pyproject.toml
	ENGINES_VENV=$(CURDIR)/$(ENGINES_VENV) ENGINES_VENV_NEXT=$(CURDIR)/$(ENGINES_VENV_NEXT) PYTHON=$(PY) \
		bash tests_engines/setup_venv.sh

test-engines: $(ENGINES_VENV)/.ready
	cd tests_engines && ../$(ENGINES_VENV)/bin/python $(PYTEST_ENGINES) --durations=10
	cd tests_engines && TOOLWIRE_SERVING_FAMILIES=qwen3,deepseek_v4 ../$(ENGINES_VENV_NEXT)/bin/python $(PYTEST_ENGINES) \
		test_vllm_versions.py test_vllm_renderer.py test_vllm_serving.py
	cd tests_engines && ../$(ENGINES_VENV_NEXT)/bin/python $(PYTEST_ENGINES) test_vllm_adapter.py \
		test_vllm_reasoning_alone.py -k "qwen3/ or not (golden or parser_alone_)"

bench: $(VENV)/.dev-installed
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(ENGINES_VENV) $(ENGINES_VENV_NEXT) build *.egg-info
