#!/usr/bin/env bash
# Build the engine venvs the engine tests run in: .engines-venv (or $ENGINES_VENV), vLLM 0.33.0 and SGLang 0.5.23,
# and .engines-venv-vllm034 (or $ENGINES_VENV_NEXT), vLLM 0.34.0 over the same packages.
#
#   bash tests_engines/setup_venv.sh
#
# vLLM and SGLang are installed without their dependencies (no GPU stack): only what importing their parser
# classes needs (vllm.tool_parsers, vllm.reasoning, vllm.parser, the chat-completion protocol and stream
# processor; sglang.srt.function_call.*, sglang.srt.parser.reasoning_parser, sglang.srt.plugins), found by
# importing them and adding packages until the imports work. torch is the CPU wheel on this machine's disk:
# pip finds it by this exact pin, and it goes in first so nothing else pulls a CUDA build.
# Idempotent; touches $VENV/.ready once everything imports.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${ENGINES_VENV:-$PWD/.engines-venv}
PY=${PYTHON:-python3}

VLLM_VERSION=0.33.0
VLLM_NEXT_VERSION=0.34.0  # the second venv ($VENV_NEXT): the version-sensitive tests run against it too
VENV_NEXT=${ENGINES_VENV_NEXT:-$VENV-vllm034}
VLLM_SDIST_SHA256=f4c33c2503d52bb411146afa9618a4f48bed68912f617e6803ac8d76e4c74112  # vllm-0.33.0.tar.gz (tests)
SGLANG_VERSION=0.5.23
TORCH_VERSION=2.13.0      # CPU wheel on disk (vLLM pins 2.14.0, SGLang 2.14.1: their parsers do not care)
TRANSFORMERS_VERSION=5.19.0  # inside vLLM's range (>=5.16.1,<5.21) and SGLang's pin
XGRAMMAR_VERSION=0.2.8    # vLLM's pin (its parser module imports xgrammar's structural tags)

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)

"${PIP[@]}" "torch==$TORCH_VERSION"
"${PIP[@]}" --no-deps "vllm==$VLLM_VERSION" "sglang==$SGLANG_VERSION"
# what those imports need (ijson: the engines' own qwen3 / engine-grammar parsers the bench and the
# comparison run), and the test runner
"${PIP[@]}" "torch==$TORCH_VERSION" "transformers==$TRANSFORMERS_VERSION" "xgrammar==$XGRAMMAR_VERSION" \
    packaging openai regex numpy cbor2 psutil pyzmq urllib3 aiohttp requests openai-harmony fastapi pillow \
    pybase64 cachetools prometheus_client msgspec cloudpickle uvloop py-cpuinfo partial-json-parser orjson \
    ipython ijson pydantic jinja2 pytest
# what vLLM's own parser tests import (tests_engines/test_vllm_own_cases.py): mistral_common (vllm.parser.mistral)
"${PIP[@]}" "torch==$TORCH_VERSION" mistral_common einops
"${PIP[@]}" llguidance jsonschema  # the grammar certification (tests_engines/test_grammar_*.py)
"${PIP[@]}" tiktoken  # the Llama-3 / Llama-4 / o200k tokenizers of tests_engines/test_grammar_token_ids_xgrammar.py
# vLLM's CPU render server (`vllm launch render`, tests_engines/test_vllm_serving*.py): what its import chain
# needs beyond the parsers' (found by starting it and adding each missing module), and the anthropic SDK (also
# imported by vLLM's Anthropic Messages endpoint) that drives it with openai's
"${PIP[@]}" "torch==$TORCH_VERSION" uvicorn watchfiles prometheus-fastapi-instrumentator \
    model-hosting-container-standards anthropic httpx
"${PIP[@]}" --no-deps -e .

"$VENV/bin/python" - <<'PY'
import vllm.reasoning, vllm.tool_parsers  # noqa: F401
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor  # noqa: F401
from vllm.parser import ParserManager  # noqa: F401
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: F401
from sglang.srt.parser.reasoning_parser import ReasoningParser  # noqa: F401
import sglang.srt.plugins  # noqa: F401
import toolwire.integrations.sglang, toolwire.integrations.vllm  # noqa: F401
from vllm.entrypoints.launchers.render.entry import run_launch_fastapi  # noqa: F401  (vllm launch render)
import toolwire.integrations.vllm_render  # noqa: F401
import anthropic, openai  # noqa: F401
import torch
assert torch.__version__.startswith("2.13.0"), torch.__version__
print("engines import: vllm", __import__("vllm").__version__, "sglang", __import__("sglang").__version__)
PY
# vLLM's own tool-parser and reasoning-parser tests (its sdist's tests/; git-ignored, in the venv, cached)
"$VENV/bin/python" tests_engines/fetch_vllm_tests.py "$VENV" "$VLLM_VERSION" "$VLLM_SDIST_SHA256"

# vLLM 0.34 over the same packages: a second venv that holds only vllm==$VLLM_NEXT_VERSION (no dependencies) and
# sees the first venv's packages after its own (a .pth that runs site.addsitedir), so `import vllm` is 0.34 and
# torch, transformers, toolwire ... are the first venv's. make test-engines runs the version-sensitive tests
# there (Makefile, ENGINE_TESTS_NEXT).
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[ -x "$VENV_NEXT/bin/python" ] || "$PY" -m venv "$VENV_NEXT"
SITE_NEXT=$("$VENV_NEXT/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if [ ! -d "$SITE_NEXT/vllm-$VLLM_NEXT_VERSION.dist-info" ]; then
    rm -f "$SITE_NEXT/toolwire-engines-base.pth"  # pip must not see the first venv's vLLM while it installs
    "$VENV_NEXT/bin/python" -m pip install -q --disable-pip-version-check --no-deps "vllm==$VLLM_NEXT_VERSION"
fi
echo "import site; site.addsitedir('$SITE')" > "$SITE_NEXT/toolwire-engines-base.pth"
"$VENV_NEXT/bin/python" - <<PY
import vllm, toolwire.integrations.vllm, toolwire.integrations.vllm_render  # noqa: F401
from vllm.entrypoints.launchers.render.entry import run_launch_fastapi  # noqa: F401
assert vllm.__version__ == "$VLLM_NEXT_VERSION", vllm.__version__
print("engines import: vllm", vllm.__version__, "(second venv)")
PY
touch "$VENV/.ready"
echo "ready: $VENV"
