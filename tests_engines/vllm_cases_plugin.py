"""pytest plugin that runs vLLM's own tool-parser and reasoning-parser tests with toolwire's adapters in place
of vLLM's parsers (loaded by ``test_vllm_own_cases.py`` in a subprocess over the tests that
``fetch_vllm_tests.py`` unpacked into the engine venv; nothing of vLLM's test code is in this repository).

What is substituted, and nothing else:

* **The parser.** In each test module listed in :data:`SUBSTITUTE`, the module-level names bound to vLLM's
  parser classes (also inside module-level dicts such as ``CONFIGS``) are rebound to the ``toolwire_<family>``
  adapter class, and ``ToolParserManager.get_tool_parser`` / ``ReasoningParserManager.get_reasoning_parser``
  return the adapter for the names listed there.
* **Tokenizers.** The hub is not reachable: ``vllm.tokenizers.get_tokenizer`` and
  ``AutoTokenizer.from_pretrained`` return the real tokenizer in ../shared/real/tokenizers where the model has
  one (:data:`REAL`), else a stand-in: the Qwen3 tokenizer behind a proxy toolwire cannot read as a
  vocabulary, so the adapter reads the text (as with any tokenizer toolwire does not know) while the test
  still splits and encodes with a real BPE. Which stand-ins were used is recorded per case.
* **The end of the stream.** vLLM's serving loop calls ``finish_streaming()`` on the last chunk for an
  ``engine_based_streaming`` parser (``ChatStreamProcessor.step``); the tests' own streaming helpers
  (``run_tool_extraction_streaming``, ``run_reasoning_extraction_streaming``) do not, so they are wrapped to
  make that one call after their last delta and add its message to their reconstructor.

Each case's outcome goes to ``$TOOLWIRE_VLLM_CASES_OUT`` (JSON lines: nodeid, families, tokenizers,
outcome, the first line of the failure).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("TOOLWIRE_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
TOKENIZERS = SHARED / "real" / "tokenizers"

# test module -> {vLLM parser class name, or "@<registry name>": toolwire format}
SUBSTITUTE: dict[str, dict[str, str]] = {
    "tests/tool_parsers/test_hermes_tool_parser.py": {"Hermes2ProToolParser": "qwen3",
                                                      "Granite4ToolParser": "granite4"},
    "tests/tool_parsers/test_granite4_tool_parser.py": {"Granite4ToolParser": "granite4"},
    "tests/tool_parsers/test_qwen3coder_tool_parser.py": {"Qwen3EngineToolParser": "qwen3_coder",
                                                          "@qwen3_coder": "qwen3_coder", "@qwen3_xml": "qwen3_coder"},
    "tests/tool_parsers/test_deepseekv3_tool_parser.py": {"@deepseek_v3": "deepseek_r1"},
    "tests/tool_parsers/test_deepseekv31_tool_parser.py": {"DeepSeekV31ToolParser": "deepseek_v31"},
    "tests/tool_parsers/test_deepseekv32_tool_parser.py": {"DeepSeekV32EngineToolParser": "deepseek_v32",
                                                           "@deepseek_v32": "deepseek_v32"},
    "tests/tool_parsers/test_deepseekv4_tool_parser.py": {"DeepSeekV4EngineToolParser": "deepseek_v4",
                                                          "@deepseek_v4": "deepseek_v4"},
    "tests/tool_parsers/test_glm4_moe_tool_parser.py": {"Glm47MoeModelToolParser": "glm45", "@glm45": "glm45",
                                                        "@glm47": "glm47"},
    "tests/tool_parsers/test_glm47_moe_tool_parser.py": {"Glm47MoeModelToolParser": "glm47", "@glm47": "glm47"},
    "tests/tool_parsers/test_kimi_k2_tool_parser.py": {"KimiK2ToolParser": "kimi_k2", "@kimi_k2": "kimi_k2"},
    "tests/tool_parsers/test_kimi_k3_named_tool_choice.py": {"KimiK3ToolParser": "kimi_k3", "@kimi_k3": "kimi_k3"},
    "tests/tool_parsers/test_minimax_m2_tool_parser.py": {"MinimaxM2ToolParser": "minimax_m2",
                                                          "@minimax_m2": "minimax_m2"},
    "tests/tool_parsers/test_minimax_m3_tool_parser.py": {"MinimaxM3ToolParser": "minimax_m3",
                                                          "@minimax_m3": "minimax_m3"},
    "tests/tool_parsers/test_llama3_json_tool_parser.py": {"Llama3JsonToolParser": "llama31",
                                                           "@llama3_json": "llama31"},
    "tests/tool_parsers/test_llama4_pythonic_tool_parser.py": {"@llama4_pythonic": "llama4"},
    "tests/tool_parsers/test_step3p5_tool_parser.py": {"Step3p5ToolParser": "step35", "@step3p5": "step35"},
    "tests/tool_parsers/test_gemma4_tool_parser.py": {"Gemma4EngineToolParser": "gemma4", "@gemma4": "gemma4"},
    "tests/tool_parsers/test_hy_v3_tool_parser.py": {"HYV3ToolParser": "hy3", "@hy_v3": "hy3"},
    "tests/tool_parsers/test_poolside_v1_tool_parser.py": {"PoolsideV1ToolParser": "laguna",
                                                           "@poolside_v1": "laguna"},
    "tests/reasoning/test_qwen3_reasoning_parser.py": {"@qwen3": "qwen3"},
    "tests/reasoning/test_deepseekr1_reasoning_parser.py": {"@deepseek_r1": "deepseek_r1"},
    "tests/reasoning/test_deepseekv3_reasoning_parser.py": {"DeepSeekV3ReasoningParser": "deepseek_v31",
                                                            "@deepseek_v3": "deepseek_v31",
                                                            "@deepseek_v4": "deepseek_v4"},
    "tests/reasoning/test_glm4_moe_reasoning_parser.py": {"@glm45": "glm45"},
    "tests/reasoning/test_minimax_m2_reasoning_parser.py": {"@minimax_m2": "minimax_m2"},
    "tests/reasoning/test_minimax_m2_append_reasoning_parser.py": {"@minimax_m2_append_think": "minimax_m2"},
    "tests/reasoning/test_minimax_m3_reasoning_parser.py": {"MiniMaxM3ReasoningParser": "minimax_m3",
                                                            "@minimax_m3": "minimax_m3"},
    "tests/reasoning/test_kimi_k2_reasoning_parser.py": {"KimiK2ReasoningParser": "kimi_k2_thinking",
                                                         "@kimi_k2": "kimi_k2_thinking"},
    "tests/reasoning/test_kimi_k3_reasoning_parser.py": {"KimiK3ReasoningParser": "kimi_k3", "@kimi_k3": "kimi_k3"},
    "tests/reasoning/test_gemma4_reasoning_parser.py": {"@gemma4": "gemma4"},
    "tests/reasoning/test_step3p5_reasoning_parser.py": {"@step3p5": "step35"},
    "tests/reasoning/test_hy_v3_reasoning_parser.py": {"HYV3ReasoningParser": "hy3", "@hy_v3": "hy3"},
    "tests/reasoning/test_nemotron_v3_reasoning_parser.py": {"@nemotron_v3": "nemotron3"},
    "tests/reasoning/test_gptoss_reasoning_parser.py": {"GptOssReasoningParser": "gpt_oss"},
}

# hub model name (prefix) -> folder in ../shared/real/tokenizers holding that model's real tokenizer
REAL = {
    "Qwen/Qwen3": "Qwen3", "Qwen/Qwen2.5": "Qwen3",
    "deepseek-ai/DeepSeek-V3.2": "DeepSeek-V4", "deepseek-ai/DeepSeek-V4": "DeepSeek-V4",
    "deepseek-ai/DeepSeek-V3": "DeepSeek-V3", "deepseek-ai/DeepSeek-R1-0528": "DeepSeek-V3",
}
STAND_IN = "Qwen3"


def _relative(path) -> str:
    parts = Path(str(path)).parts
    return "/".join(parts[parts.index("tests"):]) if "tests" in parts else str(path)


class _State:
    current: str | None = None  # the running case's module
    families: set[str] = set()
    tokenizers: set[str] = set()


STATE = _State()


# ---------------------------------------------------------------- tokenizers

class TextOnlyTokenizer:
    """A real tokenizer (vLLM and the test use it in full) that toolwire does not read as a vocabulary: the
    adapter then reads the delta text, as it does with any tokenizer it does not know."""

    _hidden = frozenset({"added_tokens_encoder", "backend_tokenizer", "get_added_tokens_decoder",
                         "encode_ordinary", "encode_single_token", "encode_special", "instruct_tokenizer",
                         "tokenizer", "pre_tokenizer", "model"})

    def __init__(self, inner, name):
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "name_or_path", name)

    def __getattr__(self, name):
        if name == "_inner" or name in TextOnlyTokenizer._hidden:
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __len__(self):
        return len(self._inner)

    def __call__(self, *args, **kwargs):
        return self._inner(*args, **kwargs)


_cache: dict[str, object] = {}


def _real(folder: str):
    if folder not in _cache:
        from transformers import AutoTokenizer, PreTrainedTokenizerFast

        from toolwire.tokenize import load_tokenizer

        path = TOKENIZERS / folder
        if (path / "tokenizer.json.gz").exists():
            _cache[folder] = PreTrainedTokenizerFast(tokenizer_object=load_tokenizer(str(path)))
        else:
            _cache[folder] = _ORIGINAL_FROM_PRETRAINED(AutoTokenizer, str(path))
    return _cache[folder]


def local_tokenizer(name: str, *args, **kwargs):
    """The tokenizer a test asked the hub for: the real one where ../shared has it, else the stand-in."""
    name = str(name)
    for prefix, folder in REAL.items():
        if name.startswith(prefix):
            STATE.tokenizers.add(f"{name}=real:{folder}")
            return _real(folder)
    STATE.tokenizers.add(f"{name}=stand-in")
    key = "stand-in:" + name
    if key not in _cache:
        _cache[key] = TextOnlyTokenizer(_real(STAND_IN), name)
    return _cache[key]


_ORIGINAL_FROM_PRETRAINED = None


def _patch_tokenizers() -> None:
    global _ORIGINAL_FROM_PRETRAINED
    import transformers
    import vllm.tokenizers

    original = transformers.AutoTokenizer.from_pretrained.__func__
    _ORIGINAL_FROM_PRETRAINED = original
    transformers.AutoTokenizer.from_pretrained = classmethod(lambda cls, name, *a, **k: local_tokenizer(name))
    vllm.tokenizers.get_tokenizer = lambda tokenizer_name=None, *a, **k: local_tokenizer(
        tokenizer_name if tokenizer_name is not None else k.get("tokenizer_name"))


# ---------------------------------------------------------------- parsers

def _adapters():
    import toolwire.integrations.vllm as tw

    return tw.PARSERS


def _record(cls):
    original = cls.__init__

    def __init__(self, *args, **kwargs):
        STATE.families.add(self.format_name)
        original(self, *args, **kwargs)

    cls.__init__ = __init__


def _patch_managers() -> None:
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    import toolwire.integrations.vllm as tw

    _record(tw.ToolwireToolParser)
    _record(tw.ToolwireReasoningParser)
    tool_lookup = ToolParserManager.get_tool_parser.__func__
    reasoning_lookup = ReasoningParserManager.get_reasoning_parser.__func__

    def family_for(name):
        mapping = SUBSTITUTE.get(STATE.current or "", {})
        return mapping.get(f"@{name}")

    def get_tool_parser(cls, name):
        family = family_for(name)
        return _adapters()[family][0] if family else tool_lookup(cls, name)

    def get_reasoning_parser(cls, name):
        family = family_for(name)
        return _adapters()[family][1] if family else reasoning_lookup(cls, name)

    ToolParserManager.get_tool_parser = classmethod(get_tool_parser)
    ReasoningParserManager.get_reasoning_parser = classmethod(get_reasoning_parser)


def _substitute_module(module, mapping: dict[str, str]) -> None:
    from vllm.reasoning import ReasoningParser
    from vllm.tool_parsers import ToolParser

    def swap(value):
        if isinstance(value, type) and value.__name__ in mapping and value.__module__.startswith("vllm."):
            tool_cls, reasoning_cls = _adapters()[mapping[value.__name__]]
            if issubclass(value, ToolParser):
                return tool_cls
            if issubclass(value, ReasoningParser):
                return reasoning_cls
        return value

    for name, value in list(vars(module).items()):
        if isinstance(value, dict):
            for key, inner in list(value.items()):
                if isinstance(inner, dict):
                    for k2, v2 in list(inner.items()):
                        inner[k2] = swap(v2)
                else:
                    value[key] = swap(inner)
        else:
            setattr(module, name, swap(value))


# ---------------------------------------------------------------- the end of the stream

def _patch_stream_helpers() -> None:
    import tests.reasoning.utils as reasoning_utils
    import tests.tool_parsers.utils as tool_utils

    tool_stream = tool_utils.run_tool_extraction_streaming

    def run_tool_extraction_streaming(tool_parser, model_deltas, request=None, assert_one_tool_per_delta=True):
        reconstructor = tool_stream(tool_parser, model_deltas, request,
                                    assert_one_tool_per_delta=assert_one_tool_per_delta)
        if getattr(tool_parser, "engine_based_streaming", False):
            last = tool_parser.finish_streaming()
            if last is not None:
                reconstructor.append_delta(last)
        return reconstructor

    reasoning_stream = reasoning_utils.run_reasoning_extraction_streaming

    def run_reasoning_extraction_streaming(reasoning_parser, model_deltas, request=None):
        reconstructor = reasoning_stream(reasoning_parser, model_deltas, request)
        if getattr(reasoning_parser, "engine_based_streaming", False):
            last = reasoning_parser.finish_streaming()
            if last is not None:
                reconstructor.append_delta(last)
        return reconstructor

    tool_utils.run_tool_extraction_streaming = run_tool_extraction_streaming
    reasoning_utils.run_reasoning_extraction_streaming = run_reasoning_extraction_streaming


# ---------------------------------------------------------------- hooks

def pytest_configure(config):
    for mark in ("skip_global_cleanup", "cpu_test", "timeout"):  # vLLM's own markers (its top-level conftest)
        config.addinivalue_line("markers", f"{mark}: vLLM's marker")
    _patch_tokenizers()
    _patch_managers()
    _patch_stream_helpers()


def pytest_ignore_collect(collection_path, config):
    if collection_path.is_file() and collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return _relative(collection_path) not in SUBSTITUTE
    return None


def pytest_collection_modifyitems(session, config, items):
    done = set()
    for item in items:
        module = item.module
        if module is None or id(module) in done:
            continue
        done.add(id(module))
        mapping = SUBSTITUTE.get(_relative(module.__file__))
        if mapping:
            _substitute_module(module, {k: v for k, v in mapping.items() if not k.startswith("@")})


def pytest_runtest_setup(item):
    STATE.current = _relative(item.path)
    STATE.families = set()
    STATE.tokenizers = set()


_outcomes: dict[str, dict] = {}


def pytest_runtest_logreport(report):
    entry = _outcomes.setdefault(report.nodeid, {"nodeid": report.nodeid, "outcome": "passed", "message": ""})
    if report.failed and entry["outcome"] == "passed":
        entry["outcome"] = "failed" if report.when == "call" else "error"
        text = getattr(report, "longreprtext", "") or ""
        lines = [line for line in text.splitlines() if line.startswith("E ")]
        entry["message"] = (lines[0][1:].strip() if lines else text.strip().splitlines()[-1:][0] if text else "")[:300]
    elif report.skipped and entry["outcome"] == "passed":
        entry["outcome"] = "skipped"
    if report.when == "teardown":
        entry["families"] = sorted(STATE.families)
        entry["tokenizers"] = sorted(STATE.tokenizers)
        mapping = SUBSTITUTE.get(_relative(report.fspath), {})
        entry["file_family"] = next(iter(mapping.values()), "")


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("TOOLWIRE_VLLM_CASES_OUT")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            for entry in _outcomes.values():
                fh.write(json.dumps(entry) + "\n")
