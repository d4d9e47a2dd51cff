#!/usr/bin/env bash
# Build the peer venv the benchmarks compare against: /work/main/.bench-venv (or $BENCH_VENV).
#
#   bash bench/setup_peers.sh
#
# It holds SGLang's function-call detectors (installed without its serving dependencies: only what the
# import chain of `sglang.srt.function_call.*_detector` needs, with the CPU torch wheel that lies on this
# machine's disk), DeepSeek's own `deepseek-recipe` (Rust; its StreamProcessor parses DSML) and toolwire
# itself (editable). Idempotent; touches $BENCH_VENV/.ready once the peers import.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${BENCH_VENV:-$PWD/.bench-venv}
PY=${PYTHON:-python3}

SGLANG_VERSION=0.5.23
RECIPE_VERSION=0.2.0
TML_RENDERERS_VERSION=0.2.1  # Thinking Machines' Rust renderers with their own tokenizers (bench_tokens)
TORCH_VERSION=2.13.0  # the CPU wheel on this machine's disk; pip finds it by this exact pin
VLLM_VERSION=0.33.0
XGRAMMAR_VERSION=0.2.8  # vLLM's pin

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)

"${PIP[@]}" --no-deps "sglang==$SGLANG_VERSION"
# what the import chain of the `sglang.srt.function_call.*_detector` modules the benchmarks use needs
# (transformers also serves bench_render's apply_chat_template; jsonschema is bench_validation's peer)
"${PIP[@]}" "torch==$TORCH_VERSION" triton psutil pybase64 starlette msgspec pyzmq ipython aiohttp openai orjson \
    partial-json-parser pydantic numpy requests packaging transformers tqdm pillow jsonschema tiktoken
"${PIP[@]}" "deepseek-recipe==$RECIPE_VERSION"
# vLLM's tool parsers (vllm.parser.ParserManager, the chat-completion protocol), without its serving stack: only
# what importing them needs; openai-harmony is also the gpt_oss stream peer (bench_harmony)
"${PIP[@]}" --no-deps "vllm==$VLLM_VERSION"
"${PIP[@]}" cbor2 fastapi cachetools prometheus_client cloudpickle uvloop py-cpuinfo "xgrammar==$XGRAMMAR_VERSION" ijson \
    mistral_common openai-harmony
"${PIP[@]}" "tml-renderers==$TML_RENDERERS_VERSION"
"${PIP[@]}" -e .

"$VENV/bin/python" - <<'PY'
import importlib

for detector in ("qwen25_detector", "qwen3_coder_detector", "deepseekv4_detector", "deepseekv31_detector",
                 "deepseekv3_detector", "kimik2_detector", "llama32_detector", "mistral_detector"):
    importlib.import_module(f"sglang.srt.function_call.{detector}")
import deepseek_recipe  # noqa: F401
import openai_harmony  # noqa: F401
import vllm.parser  # noqa: F401
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: F401
import jsonschema  # noqa: F401
import tml_renderers  # noqa: F401
import toolwire  # noqa: F401
import transformers  # noqa: F401
print("peers import: sglang detectors, vllm parsers, openai_harmony, deepseek_recipe, tml_renderers, jsonschema, transformers, toolwire")
PY
touch "$VENV/.ready"
echo "ready: $VENV"
