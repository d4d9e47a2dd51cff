"""toolwire's vLLM renderer in process: the real ``RENDERER_REGISTRY`` / ``TokenizerRegistry`` lookups a server
makes for ``--tokenizer-mode toolwire_<format>`` (``renderer_from_config`` over a ``VllmConfig``), and the hand-off
of the rendered prompt to the parser vLLM builds for the same request. (The server-level tests:
test_vllm_serving.py.) Also: importing the adapters when vLLM is installed but torch cannot be imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

import toolwire
from conftest import hf_tokenizer
from serving import model_dir


@pytest.fixture(scope="module")
def renderers(serving_root):
    from vllm.config import VllmConfig
    from vllm.engine.arg_utils import EngineArgs
    from vllm.renderers.registry import renderer_from_config

    import toolwire.integrations.vllm  # noqa: F401  (the entry point does this in a server)

    model = model_dir("Qwen3", serving_root / "models")
    built: dict = {}

    def make(mode: str):
        if mode not in built:
            config = EngineArgs(model=str(model), tokenizer_mode=mode).create_model_config()
            built[mode] = renderer_from_config(VllmConfig(model_config=config))
        return built[mode]

    return make


def _render(renderer, messages, **kwargs):
    from vllm.renderers import ChatParams, TokenizeParams

    params = ChatParams(chat_template_kwargs={"add_generation_prompt": True, "continue_final_message": False,
                                              "tools": None, "tokenize": False, **kwargs})
    tok = TokenizeParams(max_total_tokens=renderer.model_config.max_model_len, add_special_tokens=False)
    return renderer.render_chat([messages], params, tok)[1][0]["prompt_token_ids"]


@pytest.mark.parametrize("family, thinking", [("qwen3_thinking_2507", True), ("qwen3", True), ("qwen3", False)])
def test_the_parser_starts_where_the_rendered_prompt_leaves_off(renderers, family, thinking):
    from vllm.parser import ParserManager

    from toolwire.integrations.vllm_render import ToolwireRenderer

    renderer = renderers(f"toolwire_{family}")
    assert type(renderer) is ToolwireRenderer and renderer.format_name == family
    messages = [{"role": "user", "content": "Hi"}]
    ids = _render(renderer, messages, enable_thinking=thinking)
    prompt = toolwire.get_format(family).render(messages, thinking=thinking)
    assert ids == prompt.token_ids(hf_tokenizer("Qwen3"))
    parser_cls = ParserManager.get_parser(tool_parser_name=f"toolwire_{family}",
                                          reasoning_parser_name=f"toolwire_{family}", enable_auto_tools=True)
    parser = parser_cls(renderer.tokenizer, None, chat_template_kwargs={}, model_config=None)
    parser.set_prompt_token_ids(ids)
    state = parser._reasoning_parser.state
    assert state.prompt is not None and state.prompt.text == prompt.text and state.prompt.format == family
    assert state.start_in_reasoning() is prompt.opens_reasoning
    # a prompt toolwire did not render (other ids): the parser falls back to reading the prompt's tail
    other = parser_cls(renderer.tokenizer, None, chat_template_kwargs={}, model_config=None)
    other.set_prompt_token_ids(ids + ids[-1:])
    assert other._reasoning_parser.state.prompt is None


def test_the_hf_renderer_is_left_alone(renderers):
    from vllm.renderers.hf import HfRenderer

    from toolwire.integrations.vllm_render import ToolwireRenderer

    renderer = renderers("hf")
    assert isinstance(renderer, HfRenderer) and not isinstance(renderer, ToolwireRenderer)


def test_importing_the_adapters_without_torch_names_it():
    """vLLM installed, torch not importable (the issue's raw ``ModuleNotFoundError: torch``): an ImportError
    that names torch and the pip command."""
    code = ("import sys; sys.modules['torch'] = None\n"
            "try:\n    import toolwire.integrations.vllm\n"
            "except ImportError as e:\n    print(type(e).__name__, e.name, '|', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600).stdout
    assert out.startswith("ImportError torch |"), out
    assert "toolwire.integrations.vllm needs vLLM installed with its own dependencies" in out
    assert "no module named 'torch'" in out and "pip install 'toolwire[vllm]'" in out


def test_assistant_turns_carrying_their_sampled_ids_are_spliced(renderers):
    """Issue 32: an assistant message may carry the ids it was sampled as (``token_ids``, docs/history.md); the
    renderer splices them verbatim (the ids equal ``splice_token_ids``'), and refuses tampered ids with a 400 that
    names the turn and why."""
    from vllm.exceptions import VLLMValidationError

    from toolwire.history.faithful import splice_token_ids

    renderer = renderers("toolwire_qwen3")
    tok = hf_tokenizer("Qwen3")
    sampled = tok.encode("Hello there.<|im_end|>", add_special_tokens=False)
    messages = [{"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello there.", "token_ids": sampled},
                {"role": "user", "content": "Again"}]
    ids = _render(renderer, messages)
    assert list(ids) == list(splice_token_ids(toolwire.get_format("qwen3"), messages, None, tok).ids)
    assert sampled == ids[ids.index(sampled[0]):ids.index(sampled[0]) + len(sampled)]
    tampered = [dict(m, token_ids=sampled[:-2] + [sampled[-1], sampled[-2]]) if m["role"] == "assistant" else m
                for m in messages]
    with pytest.raises(VLLMValidationError, match=r"messages\[1\]\.token_ids: text_mismatch"):
        _render(renderer, tampered)
