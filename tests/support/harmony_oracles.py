"""Independent references for the gpt_oss tests: the real HF template and OpenAI's openai-harmony.

* :func:`hf_reference` renders a request with ``gpt-oss-20b.jinja`` from ../shared through the project's
  Jinja runner (apply_chat_template semantics), arguments decoded as serving stacks do.
* :func:`harmony_conversation` maps an OpenAI-style request to an ``openai_harmony.Conversation`` the way
  docs/harmony.md describes (written here, independently of the renderer), and :func:`harmony_reference`
  renders it with openai-harmony's own encoder, offline (``TIKTOKEN_ENCODINGS_BASE`` set first).
"""

from __future__ import annotations

import json
import os
from datetime import date
from functools import lru_cache

import pytest

from support import REAL

O200K_DIR = REAL / "tokenizers" / "o200k_base"
TEMPLATE = REAL / "templates" / "gpt-oss-20b.jinja"


def o200k_dir() -> str:
    if not (O200K_DIR / "o200k_base.tiktoken").is_file():
        pytest.skip(f"{O200K_DIR} is absent")
    return str(O200K_DIR)


@lru_cache(maxsize=1)
def harmony_encoding():
    """openai-harmony's HarmonyGptOss encoding, loaded offline."""
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = o200k_dir()
    oh = pytest.importorskip("openai_harmony")
    return oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)


@lru_cache(maxsize=1)
def tiktoken_encoding():
    """toolwire's offline o200k_harmony tiktoken encoding."""
    pytest.importorskip("tiktoken")
    from toolwire.templates.harmony import load_o200k_harmony

    return load_o200k_harmony(o200k_dir())


def prompt_ids(prompt, enc) -> list[int]:
    """``prompt.token_ids(enc)``; an expected failure (not a pass) while ``toolwire.tokenize`` is missing."""
    try:
        import toolwire.tokenize  # noqa: F401
    except ImportError:
        pytest.xfail("toolwire.tokenize (encode_segments) is not in this build yet")
    return prompt.token_ids(enc)


@lru_cache(maxsize=4)
def _template(day: str):
    from toolwire.templates.jinja import ChatTemplate

    if not TEMPLATE.exists():
        pytest.skip(f"{TEMPLATE} is absent")
    return ChatTemplate.from_file(TEMPLATE, now=date.fromisoformat(day))


def hf_reference(messages: list, tools: list | None, *, current_date: str, add_generation_prompt: bool = True,
                 reasoning_effort: str | None = None) -> str:
    """The real gpt-oss template's output (raises the runner's TemplateRenderError when it refuses)."""
    from toolwire.templates.jinja import decode_arguments

    variables = {"reasoning_effort": reasoning_effort} if reasoning_effort else {}
    return _template(current_date).render(decode_arguments(messages), tools,
                                          add_generation_prompt=add_generation_prompt, **variables)


def _reasoning(m: dict):
    for key in ("reasoning_content", "thinking", "reasoning"):
        if m.get(key) is not None:
            return m[key]
    return None


def _text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n\n".join(p.get("text") or "" for p in content if p.get("type", "text") == "text")


def harmony_conversation(messages: list, tools: list | None, *, current_date: str | None,
                         reasoning_effort: str = "medium"):
    """The request as openai-harmony messages (docs/harmony.md, "Mapping a request to openai-harmony")."""
    oh = pytest.importorskip("openai_harmony")
    system = oh.SystemContent.new().with_reasoning_effort(oh.ReasoningEffort(reasoning_effort.capitalize()))
    if current_date:
        system = system.with_conversation_start_date(current_date)
    out = [oh.Message.from_role_and_content(oh.Role.SYSTEM, system)]
    rest = list(messages)
    instructions = ""
    if rest and rest[0]["role"] in ("system", "developer"):
        instructions = _text(rest[0].get("content"))
        rest = rest[1:]
    fns = [t.get("function", t) for t in tools or []]
    if instructions or fns:
        dev = oh.DeveloperContent.new()
        if instructions:
            dev = dev.with_instructions(instructions)
        if fns:
            dev = dev.with_function_tools([oh.ToolDescription.new(f["name"], f["description"], f.get("parameters"))
                                           for f in fns])
        out.append(oh.Message.from_role_and_content(oh.Role.DEVELOPER, dev))
    names: dict[str, str] = {}
    last = None
    for m in rest:
        if m["role"] == "user":
            out.append(oh.Message.from_role_and_content(oh.Role.USER, _text(m.get("content"))))
        elif m["role"] == "assistant":
            reasoning = _reasoning(m)
            if reasoning:
                out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, reasoning).with_channel("analysis"))
            calls = m.get("tool_calls") or []
            content = _text(m.get("content"))
            if calls:
                if content:
                    out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, content)
                               .with_channel("commentary"))
                for call in calls:
                    fn = call["function"]
                    args = fn["arguments"] if isinstance(fn["arguments"], dict) else json.loads(fn["arguments"] or "{}")
                    out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, json.dumps(args, ensure_ascii=False))
                               .with_channel("commentary").with_recipient("functions." + fn["name"])
                               .with_content_type("<|constrain|>json"))
                    names[call.get("id") or ""] = fn["name"]
                    last = fn["name"]
            else:
                out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, content).with_channel("final"))
                last = None
        elif m["role"] == "tool":
            name = names.get(m.get("tool_call_id") or "") or last
            out.append(oh.Message.from_author_and_content(oh.Author.new(oh.Role.TOOL, f"functions.{name}"),
                                                          _text(m.get("content")))
                       .with_channel("commentary").with_recipient("assistant"))
    return oh.Conversation.from_messages(out)


def harmony_reference_ids(messages: list, tools: list | None, *, current_date: str | None,
                          add_generation_prompt: bool = True, reasoning_effort: str = "medium") -> list[int]:
    """openai-harmony's token ids for the request (for completion, or for training when no generation prompt)."""
    oh = pytest.importorskip("openai_harmony")
    enc = harmony_encoding()
    conv = harmony_conversation(messages, tools, current_date=current_date, reasoning_effort=reasoning_effort)
    if add_generation_prompt:
        return enc.render_conversation_for_completion(conv, oh.Role.ASSISTANT)
    return enc.render_conversation_for_training(conv)


def harmony_reference(messages: list, tools: list | None, **kw) -> str:
    """openai-harmony's prompt text for the request."""
    return harmony_encoding().decode_utf8(harmony_reference_ids(messages, tools, **kw))
