"""vLLM's prompt step per request: toolwire's renderer (``--tokenizer-mode toolwire_<format>``,
:class:`toolwire.integrations.vllm_render.ToolwireRenderer`) against vLLM's own renderer for the same family and
conversation, in one run.

Both are the real vLLM renderer objects a server builds (``renderer_from_config`` over a ``VllmConfig`` for a
model folder of the family's real tokenizer, no weights), timed on ``renderer.render_chat([messages],
chat_params, tok_params)``: what vLLM's ``preprocess_chat`` calls per Chat Completions request, from the request's
messages to the engine input (token ids). vLLM's own renderer is its Hugging Face renderer with the model's chat
template (``--chat-template``), which renders text and then tokenizes it, or, for DeepSeek V4, vLLM's own
``deepseek_v4`` mode (DeepSeek's Python encoder). toolwire's renders and takes its ids from the provenance
segments, and keeps the prompt for the parser. The conversation is ``bench_render``'s (2 and 50 tool-using
turns, two tools). "same ids": the two renderers gave the same token ids.

Needs the engine venv (``make test-engines`` builds it): ``.engines-venv/bin/python -m bench vllm_render``;
without vLLM the rows say the peer is missing.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path

from bench import harness
from bench.bench_render import SHARED, TOOLS, conversation

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")  # before vLLM is imported: it picks its platform then

CASES = [  # format, tokenizer folder, vLLM's own renderer: ("hf", template) or (mode, None)
    ("qwen3", "Qwen3", ("hf", "Qwen3-8B.jinja")),
    ("qwen35", "Qwen3", ("hf", "Qwen3.5-4B.jinja")),
    ("deepseek_v31", "DeepSeek-V3", ("hf", "DeepSeek-V3.1.jinja")),
    ("deepseek_v4", "DeepSeek-V4", ("deepseek_v4", None)),
]
CONFIG = {
    "Qwen3": {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 151936, "hidden_size": 64,
              "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
              "head_dim": 32, "max_position_embeddings": 40960, "eos_token_id": 151645},
    "DeepSeek-V3": {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "vocab_size": 129280,
                    "hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32, "num_hidden_layers": 1,
                    "num_attention_heads": 2, "num_key_value_heads": 2, "n_routed_experts": 4, "n_shared_experts": 1,
                    "num_experts_per_tok": 2, "kv_lora_rank": 16, "q_lora_rank": 16, "qk_rope_head_dim": 16,
                    "qk_nope_head_dim": 16, "v_head_dim": 16, "max_position_embeddings": 163840, "eos_token_id": 1},
}
CONFIG["DeepSeek-V4"] = CONFIG["DeepSeek-V3"]


def _model_dir(tokenizer: str, root: Path) -> Path:
    folder = root / tokenizer
    if not folder.exists():
        folder.mkdir()
        for item in (SHARED / "tokenizers" / tokenizer).iterdir():
            if item.name == "tokenizer.json.gz":
                (folder / "tokenizer.json").write_bytes(gzip.decompress(item.read_bytes()))
            elif item.is_file() and (item.suffix == ".json" or item.name in ("vocab.json", "merges.txt")):
                (folder / item.name).write_bytes(item.read_bytes())
        (folder / "config.json").write_text(json.dumps(CONFIG[tokenizer]), encoding="utf-8")
    return folder


def _renderer(model: Path, mode: str):
    """The renderer a server with ``--tokenizer-mode mode`` builds (``renderer_from_config``)."""
    from vllm.config import VllmConfig
    from vllm.engine.arg_utils import EngineArgs
    from vllm.renderers.registry import renderer_from_config

    model_config = EngineArgs(model=str(model), tokenizer_mode=mode).create_model_config()
    return renderer_from_config(VllmConfig(model_config=model_config))


def _request(renderer, template: str | None, thinking: bool):
    """``ChatParams`` and ``TokenizeParams`` as vLLM's ``preprocess_chat`` builds them for a request with tools."""
    from vllm.renderers import ChatParams, TokenizeParams

    kwargs = {"add_generation_prompt": True, "continue_final_message": False, "enable_thinking": thinking,
              "thinking": thinking, "tools": TOOLS, "tokenize": False}
    params = ChatParams(chat_template=template, chat_template_kwargs=kwargs)
    return params, TokenizeParams(max_total_tokens=renderer.model_config.max_model_len, add_special_tokens=False)


def main() -> None:
    if harness.optional_import("vllm.renderers.registry") is None:
        print("vLLM is not installed here: run `.engines-venv/bin/python -m bench vllm_render`", harness.MISSING)
        return
    import toolwire.integrations.vllm  # noqa: F401  (registers toolwire_<format>)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for family, tokenizer, (own_mode, template_file) in CASES:
            model = _model_dir(tokenizer, Path(tmp))
            ours = _renderer(model, f"toolwire_{family}")
            theirs = _renderer(model, own_mode)
            template = (SHARED / "templates" / template_file).read_text(encoding="utf-8") if template_file else None
            own_label = f"vLLM {own_mode}" + (f" + {template_file}" if template_file else " (its own encoder)")
            times = []
            for turns in (2, 50):
                messages = conversation(turns)
                ours_params, tok = _request(ours, None, False)
                theirs_params, _ = _request(theirs, template, False)
                run_ours = lambda: ours.render_chat([messages], ours_params, tok)[1][0]  # noqa: E731
                run_theirs = lambda: theirs.render_chat([messages], theirs_params, tok)[1][0]  # noqa: E731
                same = run_ours()["prompt_token_ids"] == run_theirs()["prompt_token_ids"]
                t_ours, t_theirs = harness.per_call_us(run_ours), harness.per_call_us(run_theirs)
                times.append((t_ours, t_theirs))
                rows.append([family, own_label, turns, f"{t_ours:,.0f}", f"{t_theirs:,.0f}",
                             f"{t_theirs / t_ours:.1f}x", "yes" if same else "no"])
            harness.record("vLLM render per request", f"{family} (2 / 50 turns), µs",
                           " / ".join(f"{a:,.0f}" for a, _ in times), own_label,
                           " / ".join(f"{b:,.0f}" for _, b in times),
                           " / ".join(f"{b / a:.1f}x" for a, b in times))
    print("\nvLLM's render step per Chat Completions request (render_chat: messages -> engine input ids), CPU µs\n")
    harness.print_table(["format", "vLLM's own renderer", "turns", "toolwire_<format> µs", "vLLM's own µs",
                         "own / toolwire", "same ids"], rows, align="llrrrrl")


if __name__ == "__main__":
    print(harness.environment())
    main()
