"""gpt-oss (OpenAI harmony): ``<|start|>role<|channel|>...<|message|>...<|end|>`` messages.

Reference: the HF chat template ``gpt-oss-20b.jinja`` (what serving stacks use; the default, byte-exact
against every golden vector) and OpenAI's ``openai-harmony`` encoder. Where the two disagree, a named option
picks the behaviour; ``profile="openai_harmony"`` selects all of harmony's at once. Every difference is
listed in ``docs/harmony.md``.

:func:`load_o200k_harmony` builds the gpt-oss tokenizer (tiktoken ``o200k_harmony``) from a local
``o200k_base.tiktoken`` file, never from the network, for ``RenderedPrompt.token_ids`` and for feeding
token ids to the stream parser.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

from toolwire.errors import InvalidOption, InvalidRequest, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, function_to_dict
from toolwire.markers import Marker
from toolwire.parsers.harmony import MARKERS, GptOssParser
from toolwire.prompt import PromptBuilder
from toolwire.templates.json_text import tojson

from .harmony_schema import harmony_namespace, hf_namespace

HF_TEMPLATE = "hf_template"
OPENAI_HARMONY = "openai_harmony"

PROFILES: dict[str, dict[str, Any]] = {
    HF_TEMPLATE: {
        "tool_schema_style": HF_TEMPLATE, "instructions_trailing_newlines": True, "constrain_json": False,
        "quote_tool_results": True, "all_tool_calls": False, "tool_call_content_channel": "analysis",
        "analysis_retention": HF_TEMPLATE, "missing_date": "today",
    },
    OPENAI_HARMONY: {
        "tool_schema_style": OPENAI_HARMONY, "instructions_trailing_newlines": False, "constrain_json": True,
        "quote_tool_results": False, "all_tool_calls": True, "tool_call_content_channel": "commentary",
        "analysis_retention": OPENAI_HARMONY, "missing_date": "omit",
    },
}
"""Each profile's value for every option on which the HF template and openai-harmony differ."""

_CHOICES = {
    "tool_schema_style": (HF_TEMPLATE, OPENAI_HARMONY), "analysis_retention": (HF_TEMPLATE, OPENAI_HARMONY),
    "tool_call_content_channel": ("analysis", "commentary"), "missing_date": ("today", "omit"),
}
_FLAGS = ("instructions_trailing_newlines", "constrain_json", "quote_tool_results", "all_tool_calls",
          "escape_markers_in_arguments")
DEFAULT_MODEL_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
KNOWLEDGE_CUTOFF = "2024-06"
EFFORTS = ("low", "medium", "high")
_CHANNEL_MARKUP = ("<|channel|>analysis<|message|>", "<|channel|>final<|message|>")
_MARKER_IN_JSON = re.compile("<(?=" + "|".join(re.escape(m[1:]) for r, m in MARKERS.items()
                                                 if r is not Marker.ENDOFTEXT) + ")")
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


@dataclass(frozen=True)
class HarmonyOptions:
    """The resolved gpt-oss render switches (profile defaults, then explicit options)."""

    tool_schema_style: str
    instructions_trailing_newlines: bool
    constrain_json: bool
    quote_tool_results: bool
    all_tool_calls: bool
    tool_call_content_channel: str
    analysis_retention: str
    missing_date: str
    escape_markers_in_arguments: bool = True
    model_identity: str = DEFAULT_MODEL_IDENTITY

    @classmethod
    def resolve(cls, extra: dict[str, Any]) -> "HarmonyOptions":
        """Validate the family options in ``extra`` and fill the rest from ``profile``."""
        profile = extra.get("profile", HF_TEMPLATE)
        if profile not in PROFILES:
            raise InvalidOption(f"profile must be one of {sorted(PROFILES)}, got {profile!r}", field="profile")
        values = dict(PROFILES[profile])
        for name, value in extra.items():
            if name in _CHOICES and value not in _CHOICES[name]:
                raise InvalidOption(f"{name} must be one of {list(_CHOICES[name])}, got {value!r}", field=name)
            if name in _FLAGS and not isinstance(value, bool):
                raise InvalidOption(f"{name} must be a bool, got {value!r}", field=name)
            if name == "model_identity" and not isinstance(value, str):
                raise InvalidOption("model_identity must be a string", field=name)
            if name != "profile":
                values[name] = value
        return cls(**values)


def _effort(value: Any) -> str:
    if value is None:
        return "medium"
    if isinstance(value, str) and value.lower() in EFFORTS:
        return value.lower()
    raise InvalidOption(f"reasoning_effort for gpt_oss must be one of {list(EFFORTS)}, got {value!r}",
                        field="reasoning_effort")


def _reasoning(message: Message) -> str | None:
    """The message's reasoning under any of its names (transformers' aliasing order)."""
    extra = message.model_extra or {}
    for name in _REASONING_FIELDS:
        value = message.reasoning_content if name == "reasoning_content" else extra.get(name)
        if value is not None:
            return value if isinstance(value, str) else str(value)
    return None


def _text(message: Message) -> str | None:
    return None if message.content is None else message.text()


@dataclass
class _Msg:
    """One harmony message before it is written: header parts, body, end marker, provenance."""

    index: int | None
    role: str                 # "assistant", "user", "system", "developer", or a tool author ("functions.x")
    channel: str | None
    body: str
    end: str
    recipient: str | None = None
    content_type: str | None = None
    kind: str = "text"        # "analysis" | "final" | "call" | "preamble" | "tool" | "text" (user, system...)
    parts: list[tuple[str, str]] | None = None   # the body as (segment kind, text); default: body as content
    custom_type: bool = False  # the content type came from the request


class HarmonyFormat(Format):
    """gpt-oss harmony: system and developer headers, analysis / commentary / final channels, calls to
    ``functions.NAME`` ending in ``<|call|>``, results from ``functions.NAME to=assistant``."""
    tool_result_json = True  # the template writes a result with tojson

    content_parts = "refuse"  # the template refuses or drops list content
    parser_class = GptOssParser

    # ---- rendering
    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        opts = HarmonyOptions.resolve(options.extra)
        functions = [function_to_dict(t) for t in tools]
        harmony = [self._system(options, opts, bool(functions))]
        loop = messages
        instructions = ""
        if messages and messages[0].role in ("system", "developer"):
            instructions = messages[0].text()
            loop = messages[1:]
        if instructions or functions:
            harmony.append(self._developer(instructions, functions, opts))
        offset = len(messages) - len(loop)
        harmony += self._conversation(loop, offset, options, opts)
        for msg in harmony:
            self._write(msg, out)
        if options.add_generation_prompt:
            out.special(MARKERS["start"]).template("assistant")
        return False

    def _system(self, options: RenderOptions, opts: HarmonyOptions, has_tools: bool) -> _Msg:
        when = options.current_date or (date.today().isoformat() if opts.missing_date == "today" else None)
        top = [opts.model_identity, f"Knowledge cutoff: {KNOWLEDGE_CUTOFF}"] + ([f"Current date: {when}"] if when else [])
        body = "\n".join(top) + f"\n\nReasoning: {_effort(options.reasoning_effort)}\n\n"
        body += "# Valid channels: analysis, commentary, final. Channel must be included for every message."
        if has_tools:
            body += "\nCalls to these tools must go to the commentary channel: 'functions'."
        return _Msg(None, "system", None, "", MARKERS["end"], parts=[("template", body)])

    def _developer(self, instructions: str, functions: list[dict], opts: HarmonyOptions) -> _Msg:
        parts: list[tuple[str, str]] = []
        if instructions:
            parts += [("template", "# Instructions\n\n"), ("content", instructions)]
            if functions or opts.instructions_trailing_newlines:
                parts.append(("template", "\n\n"))
        if functions:
            render = hf_namespace if opts.tool_schema_style == HF_TEMPLATE else harmony_namespace
            parts += [("template", "# Tools\n\n"), ("content", render(functions))]
        return _Msg(0 if instructions else None, "developer", None, "", MARKERS["end"], parts=parts)

    def _conversation(self, loop: list[Message], offset: int, options: RenderOptions,
                      opts: HarmonyOptions) -> list[_Msg]:
        out: list[_Msg] = []
        last_call: str | None = None
        call_names: dict[str, str] = {}
        override = bool(options.policy)
        for k, m in enumerate(loop):
            i = k + offset
            if m.role == "assistant":
                self._check_markup(m, i)
                calls = m.tool_calls or []
                reasoning = _reasoning(m)
                if calls:
                    # the HF rule lives in toolwire.context_policy (kept until a later final answer exists)
                    keep = options.keeps_reasoning(i) if override or opts.analysis_retention == HF_TEMPLATE else True
                    out += self._calls_message(m, i, calls, reasoning, keep, opts)
                    last_call = calls[-1 if opts.all_tool_calls else 0].function.name
                    for c in calls[:None if opts.all_tool_calls else 1]:
                        if c.id:
                            call_names[c.id] = c.function.name
                    continue
                closing = k == len(loop) - 1 and not options.add_generation_prompt
                if override:
                    keep = options.keeps_reasoning(i) and reasoning is not None and (closing or bool(reasoning))
                elif opts.analysis_retention == HF_TEMPLATE:
                    keep = options.keeps_reasoning(i) and reasoning is not None
                else:
                    keep = bool(reasoning)
                if keep:
                    out.append(_Msg(i, "assistant", "analysis", reasoning or "", MARKERS["end"], kind="analysis"))
                out.append(_Msg(i, "assistant", "final", _text(m) or "",
                                MARKERS["return"] if closing else MARKERS["end"], kind="final"))
                last_call = None
            elif m.role == "tool":
                name = call_names.get(m.tool_call_id or "") if opts.all_tool_calls else None
                name = name or last_call
                if name is None:
                    raise UnsupportedByFormat("Message has tool role, but there was no previous assistant message "
                                              "with a tool call!", message_index=i, field="role")
                body = m.content if m.content.__class__ is dict else m.text()  # a JSON object: tojson writes it as is
                out.append(_Msg(i, f"functions.{name}", "commentary",
                                tojson(body) if opts.quote_tool_results else m.text(),
                                MARKERS["end"], recipient="assistant", kind="tool"))
            elif m.role == "user":
                out.append(_Msg(i, "user", None, m.text(), MARKERS["end"]))
            # the template renders no other role after the first message (later system/developer: dropped)
        if opts.analysis_retention == OPENAI_HARMONY and not override:
            out = _harmony_auto_drop(out)
        return out

    def _check_markup(self, m: Message, i: int) -> None:
        for field, value in (("content", _text(m)), ("reasoning_content", _reasoning(m))):
            if value is not None and any(s in value for s in _CHANNEL_MARKUP):
                raise UnsupportedByFormat(
                    f"the {field} holds <|channel|> tags; pass analysis text as reasoning_content and final text "
                    "as content (the gpt-oss template refuses this)", message_index=i, field=field)

    def _calls_message(self, m: Message, i: int, calls: list, reasoning: str | None, keep: bool,
                       opts: HarmonyOptions) -> list[_Msg]:
        content = _text(m)
        out: list[_Msg] = []
        if opts.tool_call_content_channel == "analysis":
            if content and reasoning:
                raise UnsupportedByFormat("Cannot pass both content and thinking in an assistant message with tool "
                                          "calls! Put the analysis message in one or the other, but not both.",
                                          message_index=i, field="content")
            if keep and (content or reasoning):
                out.append(_Msg(i, "assistant", "analysis", content or reasoning or "", MARKERS["end"],
                                kind="analysis"))
        else:
            if keep and reasoning:
                out.append(_Msg(i, "assistant", "analysis", reasoning, MARKERS["end"], kind="analysis"))
            if content:
                out.append(_Msg(i, "assistant", "commentary", content, MARKERS["end"], kind="preamble"))
        for n, call in enumerate(calls if opts.all_tool_calls else calls[:1]):
            args = tojson(call_arguments(call, i, n))
            if opts.escape_markers_in_arguments:
                args = _MARKER_IN_JSON.sub(r"\\u003c", args)
            ctype = (call.function.model_extra or {}).get("content_type")
            if ctype is not None and not isinstance(ctype, str):
                raise InvalidRequest("content_type must be a string", message_index=i,
                                     field=f"tool_calls[{n}].function.content_type")
            custom = ctype is not None
            if ctype is None:
                ctype = MARKERS["constrain"] + "json" if opts.constrain_json else "json"
            out.append(_Msg(i, "assistant", "commentary", args, MARKERS["call"], recipient=call.function.name,
                            content_type=ctype, kind="call", custom_type=custom))
        return out

    # ---- writing
    def _write(self, msg: _Msg, out: PromptBuilder) -> None:
        i = msg.index
        out.special(MARKERS["start"], i)
        if msg.kind == "call":
            out.template("assistant to=functions.", i).content(msg.recipient, i)
        elif msg.kind == "tool":
            out.template("functions.", i).content(msg.role[len("functions."):], i)
            out.template(" to=" + msg.recipient, i)
        else:
            out.template(msg.role, i)
        if msg.channel:
            out.special(MARKERS["channel"], i).template(msg.channel, i)
        ctype = msg.content_type
        if ctype is not None:
            out.template(" ", i)
            if ctype.startswith(MARKERS["constrain"]):
                out.special(MARKERS["constrain"], i)
                ctype = ctype[len(MARKERS["constrain"]):]
            out.add("content" if msg.custom_type else "template", ctype, i)
        out.special(MARKERS["message"], i)
        for kind, text in msg.parts if msg.parts is not None else [("content", msg.body)]:
            out.add(kind, text, i)
        out.special(msg.end, i)


def _harmony_auto_drop(msgs: list[_Msg]) -> list[_Msg]:
    """openai-harmony's ``auto_drop_analysis``: when the last assistant message is a final answer, drop
    the analysis messages that come before the conversation's first final answer."""
    last = next((m for m in reversed(msgs) if m.role == "assistant"), None)
    if last is None or last.channel != "final":
        return msgs
    first_final = next(n for n, m in enumerate(msgs) if m.channel == "final")
    return [m for n, m in enumerate(msgs) if not (n < first_final and m.kind == "analysis")]


# ---------------------------------------------------------------------------------- the gpt-oss tokenizer

O200K_BASE_FILE = "o200k_base.tiktoken"
O200K_BASE_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_BUILD_LOCK = threading.Lock()


def load_o200k_harmony(directory: str | os.PathLike | None = None):
    """The gpt-oss tokenizer (tiktoken ``o200k_harmony``) built offline from ``o200k_base.tiktoken``.

    ``directory`` holds the file; by default ``$TIKTOKEN_ENCODINGS_BASE`` (the variable openai-harmony reads).
    The file's sha256 is checked. Nothing is downloaded: tiktoken's own ``o200k_harmony`` definition
    (pattern and special tokens) is built on the local ranks. Cached per directory.
    """
    folder = directory if directory is not None else os.environ.get("TIKTOKEN_ENCODINGS_BASE")
    if not folder:
        raise FileNotFoundError("no o200k_base directory: pass one, or set TIKTOKEN_ENCODINGS_BASE")
    path = Path(folder) / O200K_BASE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    return _build_encoding(str(path.resolve()))


@lru_cache(maxsize=4)
def _build_encoding(path: str):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public

    ranks = load_tiktoken_bpe(path, expected_hash=O200K_BASE_SHA256)
    with _BUILD_LOCK:
        fetch = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = lambda *_args, **_kwargs: ranks  # the local file, never a URL
        try:
            spec = openai_public.o200k_harmony()
        finally:
            openai_public.load_tiktoken_bpe = fetch
    return tiktoken.Encoding(**spec)


FORMATS: dict[str, Format] = {"gpt_oss": HarmonyFormat()}

__all__ = ["HarmonyFormat", "HarmonyOptions", "PROFILES", "FORMATS", "load_o200k_harmony", "MARKERS"]
