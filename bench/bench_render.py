"""Rendering: native renderers against the models' chat templates and DeepSeek's own encoders.

Table 1: for a 2-turn and a 50-turn conversation with tools (each turn: user, assistant tool call, tool
result, assistant answer; then a final user message), µs per render of

* ``toolwire``: the family's native renderer (``Format.render``, request validation included);
* ``jinja``: toolwire's Jinja runner (:mod:`toolwire.templates.jinja`) on the model's template;
* ``transformers``: ``tokenizer.apply_chat_template(..., tokenize=False)`` on the same template;

and the ratio transformers / toolwire. ``same`` says whether the three texts are identical.

Table 2 (DeepSeek): toolwire ``deepseek_v4`` against ``deepseek-recipe`` (DeepSeek's Rust encoder,
``DeepseekV4Encoding``), and toolwire ``deepseek_v32`` against DeepSeek's reference Python encoder
(``encoding_dsv32.encode_messages``, as SGLang ships it). Both peers live in ``.bench-venv``
(``bench/setup_peers.sh``); rows for a missing peer say so. DeepSeek's V4 Python encoder is not
installable from a package registry, so V4 is measured against the Rust encoder only.

All timings run in one process: CPU µs per call, median of 5 batches (:func:`bench.harness.per_call_us`).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import toolwire
from bench import harness
from toolwire.templates.jinja import ChatTemplate, decode_arguments

SHARED = Path(__file__).resolve().parents[2] / "shared" / "real"
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Get the weather for a city.",
                                      "parameters": {"type": "object", "properties": {
                                          "city": {"type": "string"}, "days": {"type": "integer"}},
                                          "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "description": "Search the web.",
                                      "parameters": {"type": "object", "properties": {
                                          "q": {"type": "string"}, "limit": {"type": "integer"}},
                                          "required": ["q"]}}},
]
BOS_LLAMA = {"bos_token": "<|begin_of_text|>"}
BOS_DEEPSEEK = {"bos_token": "<｜begin▁of▁sentence｜>"}
PAIRS = [  # format, template file (under ../shared/real/templates), bos/eos the template reads
    ("qwen25", "Qwen2.5-7B-Instruct.jinja", {}),
    ("qwen3", "Qwen3-8B.jinja", {}),
    ("qwen3_instruct_2507", "Qwen3-4B-Instruct-2507.jinja", {}),
    ("qwen3_thinking_2507", "Qwen3-4B-Thinking-2507.jinja", {}),
    ("qwen3_coder", "Qwen3-Coder.jinja", {}),
    ("qwen35", "Qwen3.5-4B.jinja", {}),
    ("qwen36", "Qwen3.6-35B-A3B.jinja", {}),
    ("qwen38", "Qwen3.8-27B.jinja", {}),
    ("glm45", "GLM-4.5.jinja", {}),
    ("glm46", "GLM-4.6.jinja", {}),
    ("glm47", "GLM-4.7-Flash.jinja", {}),
    ("llama31", "Llama-3.1-8B-Instruct.jinja", BOS_LLAMA),
    ("llama32", "Llama-3.2-3B-Instruct.jinja", {**BOS_LLAMA, "eos_token": "<|eot_id|>"}),
    ("llama4", "Llama-4-transformers-default.jinja", {**BOS_LLAMA, "eos_token": "<|eot|>"}),
    ("hermes3", "Hermes-3-Llama-3.1-8B-tool_use.jinja", BOS_LLAMA),
    ("deepseek_r1", "DeepSeek-R1.jinja", BOS_DEEPSEEK),
    ("deepseek_v31", "DeepSeek-V3.1.jinja", BOS_DEEPSEEK),
    ("kimi_k2", "Kimi-K2-Instruct.jinja", {}),
    ("kimi_k2_thinking", "Kimi-K2-Thinking.jinja", {}),
    ("kimi_k3", "extra/Kimi-K3.jinja", {}),
    ("minimax_m2", "MiniMax-M2.jinja", {}),
    ("minimax_m3", "extra/MiniMax-M3.jinja", {}),
    ("mistral_small32", "Mistral-Small-3.2-24B-Instruct-2506.jinja", {"bos_token": "<s>", "eos_token": "</s>"}),
    ("ministral3", "Ministral-3-14B-Reasoning-2512.jinja", {"bos_token": "<s>", "eos_token": "</s>"}),
    ("gpt_oss", "gpt-oss-20b.jinja", {}),
    ("seed_oss", "Seed-OSS-36B-Instruct.jinja", {}),
    ("granite4", "Granite-4.1.jinja", {}),
    ("gemma4", "Gemma-4-E2B-it.jinja", {"bos_token": "<bos>"}),
    ("nemotron3", "extra/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja", {}),
    ("step35", "extra/StepFun3.5-Flash.jinja", {"bos_token": "<s>"}),
    ("laguna", "extra/poolside-Laguna-S-2.1.jinja", {}),
    ("hy3", "extra/tencent-Hy3.jinja", {}),
    ("glm53", "extra/GLM-5.3.jinja", {}),
    ("gigachat35", "extra/GigaChat3.5.jinja", {"bos_token": "<s>", "eos_token": "</s>"}),
]
"""Every format whose reference is a chat template in ../shared/real (DeepSeek V3.2 / V4 / V4.1 have none: their
references are DeepSeek's Python encoders, table 2)."""


def conversation(turns: int) -> list[dict]:
    """``turns`` tool-using turns, then a new user message (ids are 9 characters for Mistral-style checks)."""
    messages: list[dict] = [{"role": "system", "content": "You are a helpful travel assistant."}]
    for t in range(turns):
        cid = f"c{t:08d}"
        messages += [
            {"role": "user", "content": f"What's the weather in city number {t}, and any news?"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": cid, "type": "function", "function": {
                "name": "get_weather", "arguments": json.dumps({"city": f"City {t}", "days": t % 7 + 1})}}]},
            {"role": "tool", "tool_call_id": cid, "content": json.dumps({"temp_c": 10 + t % 20, "sky": "clear"})},
            {"role": "assistant", "content": f"It is {10 + t % 20} °C and clear in City {t}."},
        ]
    messages.append({"role": "user", "content": "Thanks! Summarise everything."})
    return messages


def _carrier_tokenizer():
    """A transformers tokenizer to call apply_chat_template on (the template is passed explicitly), with
    ``strftime_now`` pinned to the date the other renderers get."""
    try:
        from datetime import datetime

        from transformers import AutoTokenizer
        from transformers.utils import chat_template_utils
    except ImportError:
        return None

    class _Pinned(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2025, 3, 14)

    chat_template_utils.datetime = _Pinned
    folder = SHARED / "tokenizers" / "Qwen3"
    return AutoTokenizer.from_pretrained(str(folder)) if folder.is_dir() else None


def _template_messages(messages: list[dict], render) -> list[dict]:
    """The messages as the template reads them: arguments decoded to objects (as transformers users pass them), or
    as JSON strings where the template concatenates them as text (DeepSeek-R1) and so refuses objects."""
    decoded = decode_arguments(messages)
    try:
        render(decoded)
    except Exception:  # noqa: BLE001 - the template's own refusal of object arguments
        return messages
    return decoded


def template_table() -> None:
    """Print table 1 and record, per format, transformers / toolwire at 2 and 50 turns."""
    hf = _carrier_tokenizer()
    rows = []
    available = set(toolwire.formats())
    for fmt_name, template_file, special in PAIRS:
        path = SHARED / "templates" / template_file
        if fmt_name not in available or not path.exists():
            continue
        fmt = toolwire.get_format(fmt_name)
        source = path.read_text(encoding="utf-8")
        runner = ChatTemplate(source, special_tokens=special, now="2025-03-14")
        options = {"thinking": fmt_name == "gpt_oss"}
        variables = fmt.template_variables(**options)
        variables.pop("add_generation_prompt", None)
        ours_us, theirs_us = [], []
        for turns in (2, 50):
            messages = conversation(turns)
            template_messages = _template_messages(messages, lambda m: runner.render(  # noqa: B023
                m, TOOLS, add_generation_prompt=True, **variables))
            native_opts = dict(options)
            if "strftime_now" in source:
                native_opts["current_date"] = "2025-03-14"
            native = lambda: fmt.render(messages, TOOLS, **native_opts)  # noqa: E731
            ours = lambda: runner.render(template_messages, TOOLS, add_generation_prompt=True, **variables)  # noqa: E731
            texts = {native().text, ours()}
            t_native, t_ours = harness.per_call_us(native), harness.per_call_us(ours)
            if hf is not None:
                theirs = lambda: hf.apply_chat_template(  # noqa: E731
                    copy.deepcopy(template_messages), tools=TOOLS, chat_template=source, tokenize=False,
                    add_generation_prompt=True, **special, **variables)
                texts.add(theirs())
                t_hf = harness.per_call_us(theirs)
                hf_cell, ratio = f"{t_hf:,.0f}", f"{t_hf / t_native:.1f}x"
                ours_us.append(t_native)
                theirs_us.append(t_hf)
            else:
                hf_cell, ratio = "(transformers missing)", "-"
            rows.append([fmt_name, template_file.rpartition("/")[2], turns, f"{t_native:,.0f}", f"{t_ours:,.0f}",
                         hf_cell, ratio, "yes" if len(texts) == 1 else "NO"])
        if theirs_us:
            harness.record("render", f"{fmt_name} (2 / 50 turns), µs", " / ".join(f"{t:,.0f}" for t in ours_us),
                           "apply_chat_template", " / ".join(f"{t:,.0f}" for t in theirs_us),
                           " / ".join(f"{b / a:.1f}x" for a, b in zip(ours_us, theirs_us)))
    print("\nnative renderers against the models' chat templates (CPU µs per render)\n")
    harness.print_table(["format", "template", "turns", "toolwire µs", "jinja runner µs", "apply_chat_template µs",
                         "transformers / toolwire", "same text"], rows, align="llrrrrrl")


# ---------------------------------------------------------------- DeepSeek encoders

def _openai_to_recipe(messages: list[dict], tools: list[dict], thinking: bool):
    import deepseek_recipe as dr

    out = []
    for m in messages:
        role = m["role"]
        if role == "system":
            out.append(dr.SystemMessage(m["content"]))
        elif role == "user":
            out.append(dr.UserMessage(m["content"]))
        elif role == "tool":
            out.append(dr.ToolMessage(m["content"], tool_call_id=m["tool_call_id"]))
        else:
            calls = [dr.ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
                     for c in m.get("tool_calls") or []]
            out.append(dr.AssistantMessage(m.get("content") or "", reasoning_content=m.get("reasoning_content"),
                                           tool_calls=calls or None))
    defs = [dr.ToolDefinition(t["function"]["name"], t["function"].get("description"), t["function"]["parameters"])
            for t in tools]
    return dr.Conversation(out, thinking_mode=thinking, tools=defs)


def _dsv32_reference():
    """DeepSeek's reference V3.2 encoder as SGLang ships it, loaded without SGLang's import chain."""
    import importlib.util

    try:
        import sglang
    except ImportError:
        return None
    path = Path(sglang.__file__).parent / "srt" / "entrypoints" / "openai" / "encoding_dsv32.py"
    spec = importlib.util.spec_from_file_location("encoding_dsv32", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dsv32_messages(messages: list[dict], tools: list[dict]) -> list[dict]:
    out = copy.deepcopy(messages)
    out[0]["tools"] = copy.deepcopy(tools)  # the reference reads tools from the system message
    return out


def _encoder_rows(rows: list, label: str, turns: int, native, peer_label: str, peer) -> None:
    """Time toolwire's ``native`` render and, when there is one, the ``peer`` encoder (which returns the prompt
    text); add their rows (with whether the texts are identical) and record the ratio for the summary."""
    t_native = harness.per_call_us(native)
    rows.append([f"toolwire {label}", turns, f"{t_native:,.0f}", "1.0x", "-"])
    if peer is None:
        rows.append([f"{peer_label} (not installed: bench/setup_peers.sh)", turns, "-", "-", "-"])
        return
    same = peer() == native().text
    t_peer = harness.per_call_us(peer)
    rows.append([peer_label, turns, f"{t_peer:,.0f}", f"{t_peer / t_native:.2f}x", "yes" if same else "NO"])
    harness.record("render", f"{label}, {turns} turns, µs", f"{t_native:,.0f}", peer_label, f"{t_peer:,.0f}",
                   f"{t_peer / t_native:.2f}x")


def deepseek_table() -> None:
    """Print table 2 (DeepSeek encoders) and record its ratios."""
    rows: list = []
    available = set(toolwire.formats())
    dr = harness.optional_import("deepseek_recipe")
    reference = _dsv32_reference()
    for turns in (2, 50):
        messages = conversation(turns)
        if "deepseek_v4" in available:
            fmt = toolwire.get_format("deepseek_v4")
            recipe = None
            if dr is not None:
                encoding = dr.DeepseekV4Encoding()
                recipe = lambda: encoding.render_conversation(  # noqa: E731
                    _openai_to_recipe(messages, TOOLS, thinking=False)).prompt
            _encoder_rows(rows, "deepseek_v4", turns, lambda: fmt.render(messages, TOOLS),
                          "deepseek-recipe DeepseekV4Encoding (Rust)", recipe)
        if "deepseek_v32" in available:
            fmt32 = toolwire.get_format("deepseek_v32")
            ref = None
            if reference is not None:
                ref_messages = _dsv32_messages(messages, TOOLS)
                ref = lambda: reference.encode_messages(copy.deepcopy(ref_messages), thinking_mode="chat")  # noqa: E731
            _encoder_rows(rows, "deepseek_v32", turns, lambda: fmt32.render(messages, TOOLS),
                          "reference encoding_dsv32.encode_messages (Python)", ref)
    print("\nDeepSeek: native renderers against DeepSeek's own encoders (CPU µs per render)\n")
    harness.print_table(["encoder", "turns", "µs", "peer / toolwire", "same text"], rows, align="lrrrl")


def main(argv: list[str] | None = None) -> None:
    """Print both tables (markdown); ``--deepseek`` in ``argv`` prints only table 2. ``python -m bench`` calls it
    with no arguments (the command line there names modules)."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--deepseek", action="store_true", help="run only table 2 (DeepSeek encoders)")
    args = parser.parse_args(argv or [])
    if not args.deepseek:
        template_table()
    deepseek_table()


if __name__ == "__main__":
    import sys

    print(harness.environment())
    main(sys.argv[1:])
