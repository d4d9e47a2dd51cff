"""Run a model's own Jinja chat template the way transformers' ``apply_chat_template(tokenize=False)`` does.

Works without transformers. What it reproduces (transformers 5.x ``render_jinja_template``):

* an ``ImmutableSandboxedEnvironment`` with ``trim_blocks``, ``lstrip_blocks``, loop controls and the
  ``{% generation %}`` tag (rendered as its body);
* ``tojson`` that keeps non-ASCII characters and returns plain text (never HTML-escaped ``Markup``);
* ``raise_exception(msg)``, ``strftime_now(fmt)`` (with an injectable date), a sandbox-safe ``dict``
  and a ``namespace`` that refuses underscore-prefixed attributes;
* request preparation: message objects become dicts, top-level keys whose value is ``None`` are dropped,
  everything the template sees is rebuilt from plain JSON types, and a message's reasoning is aliased under
  ``reasoning_content`` and ``thinking`` (from ``reasoning_content``, ``thinking`` or ``reasoning``);
* the tokenizer config's named special tokens (``bos_token``, ``eos_token`` ...) as template variables.

>>> tpl = ChatTemplate("{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}", bos_token="<s>")
>>> tpl.render([{"role": "user", "content": "hi"}])
'<s>hi'
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

import jinja2
import jinja2.ext
import jinja2.meta
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from toolwire.errors import ToolwireError

SPECIAL_TOKEN_ATTRIBUTES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
                            "mask_token")
"""The named special tokens a tokenizer passes to its chat template (transformers' order)."""

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
"""Names a message's reasoning may come under; the first is the one most templates read."""


class TemplateRenderError(ToolwireError):
    """The chat template failed on this input (an exception inside the template, or a sandbox refusal).

    ``original`` is the underlying exception; ``kind`` is its class name (``TypeError``, ``UndefinedError``...).
    """

    code = "template_error"

    def __init__(self, original: BaseException):
        self.original = original
        self.kind = type(original).__name__
        super().__init__(f"{self.kind}: {original}")


class TemplateRefused(TemplateRenderError):
    """The template itself refused the input with ``raise_exception(...)``."""

    code = "template_refused"


# ---------------------------------------------------------------- the sandboxed environment

class _Refusal(jinja2.exceptions.TemplateError):
    """What ``raise_exception`` raises inside the template (a ``TemplateError``, as in transformers)."""


def _raise_exception(message: Any) -> None:
    raise _Refusal(message)


def _tojson(value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


class _SafeDict:
    """The template's ``dict``: builds dicts, but exposes nothing of the ``dict`` type itself."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        return dict.fromkeys(*args, **kwargs)


class _SafeNamespace(jinja2.utils.Namespace):
    """``namespace(...)`` that refuses underscore-prefixed attribute names."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 - same signature trick as jinja's Namespace
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _SafeNamespace._check(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _SafeNamespace._check(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(f"namespace attribute {name!r} starts with an underscore")


class _GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}`` (assistant-mask markers): rendered as its body."""

    tags = {"generation"}

    def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller: Callable[[], str]) -> str:
        return caller()


@lru_cache(maxsize=64)
def _compile(source: str) -> jinja2.Template:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[_GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["dict"] = _SafeDict()
    env.globals["namespace"] = _SafeNamespace
    return env.from_string(source)


@lru_cache(maxsize=64)
def template_variables(source: str) -> frozenset[str]:
    """The top-level variables a template reads (``enable_thinking``, ``bos_token``...)."""
    env = _compile(source).environment
    return frozenset(jinja2.meta.find_undeclared_variables(env.parse(source)))


# ---------------------------------------------------------------- request preparation

def plain_data(value: Any) -> Any:
    """``value`` rebuilt from plain JSON types (str/int/float/bool/None, dicts, lists, tuples).

    Pydantic models and dataclasses become dicts; anything else becomes an inert ``"<TypeName>"``
    placeholder, so the sandbox never sees an object with methods of its own.
    """
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain_data(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain_data(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return plain_data(value.model_dump())
    return f"<{type(value).__name__}>"


def _as_dict(message: Any) -> Any:
    if callable(getattr(message, "model_dump", None)):
        return message.model_dump()
    if dataclasses.is_dataclass(message) and not isinstance(message, type):
        return {f.name: getattr(message, f.name) for f in dataclasses.fields(message)}
    return message


def prepare_messages(messages: Iterable[Any], *, drop_none: bool = True) -> list[dict]:
    """Messages as the template sees them: plain dicts, ``None``-valued top-level keys dropped (as
    ``apply_chat_template`` does), reasoning aliased under ``thinking`` and ``reasoning_content``."""
    out = []
    for index, message in enumerate(messages):
        message = _as_dict(message)
        if not isinstance(message, Mapping):
            raise TypeError(f"messages[{index}] should be a dict or a model, got {type(message).__name__}")
        if drop_none:
            message = {k: v for k, v in message.items() if v is not None}
        message = plain_data(message)
        reasoning = next((message[k] for k in REASONING_FIELDS if message.get(k) is not None), None)
        if reasoning is not None:
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


def prepare_tools(tools: Iterable[Any] | None) -> list | None:
    """Tools as the template sees them: OpenAI tool dicts (models are dumped), or ``None``."""
    if tools is None:
        return None
    prepared = []
    for index, tool in enumerate(tools):
        tool = _as_dict(tool)
        if not isinstance(tool, Mapping):
            raise TypeError(f"tools[{index}] should be a JSON schema dict, got {type(tool).__name__}")
        prepared.append(tool)
    return plain_data(prepared)


# ---------------------------------------------------------------- tokenizer config

def _token_text(value: Any) -> str | None:
    if isinstance(value, Mapping):
        value = value.get("content")
    return value if isinstance(value, str) else None


def special_tokens_from_config(path: str | Path) -> dict[str, str]:
    """The named special tokens (``bos_token``, ``eos_token``...) of a tokenizer directory or its
    ``tokenizer_config.json`` (``AddedToken`` dicts are read by their ``content``; ``null`` is left out).
    ``special_tokens_map.json`` beside it fills in any token the config does not name."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    config = _read_json(path / "tokenizer_config.json" if path.is_dir() else path)
    legacy = _read_json(folder / "special_tokens_map.json") if (folder / "special_tokens_map.json").exists() else {}
    tokens: dict[str, str] = {}
    for attr in SPECIAL_TOKEN_ATTRIBUTES:
        text = _token_text(config.get(attr)) if attr in config else _token_text(legacy.get(attr))
        if text is not None:
            tokens[attr] = text
    return tokens


def chat_template_from_config(path: str | Path, name: str | None = None) -> str | None:
    """The chat template shipped in a tokenizer directory: ``chat_template.jinja`` or the config's
    ``chat_template`` (a string, or a list of named templates: ``name``, else ``tool_use`` when asked, else
    ``default``)."""
    path = Path(path)
    if path.is_dir() and name is None and (path / "chat_template.jinja").exists():
        return (path / "chat_template.jinja").read_text(encoding="utf-8")
    config = _read_json(path / "tokenizer_config.json" if path.is_dir() else path)
    value = config.get("chat_template")
    if isinstance(value, list):
        named = {item.get("name"): item.get("template") for item in value if isinstance(item, Mapping)}
        return named.get(name or "default")
    return value if isinstance(value, str) else None


def _read_json(path: Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data


# ---------------------------------------------------------------- the runner

def _clock(now: Any) -> Callable[[], datetime]:
    if now is None:
        return datetime.now
    if callable(now):
        return now
    if isinstance(now, datetime):
        return lambda: now
    if isinstance(now, date):
        fixed = datetime(now.year, now.month, now.day)
        return lambda: fixed
    if isinstance(now, str):
        fixed = datetime.fromisoformat(now)
        return lambda: fixed
    raise TypeError(f"now must be a datetime, a date, an ISO date string or a callable, not {type(now).__name__}")


class ChatTemplate:
    """A compiled chat template plus the template variables a tokenizer would add.

    ``special_tokens`` are the named special tokens (see :func:`special_tokens_from_config`); the
    keyword arguments ``bos_token=...`` / ``eos_token=...`` add or override them. ``now`` fixes the date
    ``strftime_now`` sees: a ``datetime``, a ``date``, an ISO string or a callable (default: the clock).
    """

    def __init__(self, source: str, *, special_tokens: Mapping[str, str] | None = None, now: Any = None,
                 **named_tokens: str):
        unknown = set(named_tokens) - set(SPECIAL_TOKEN_ATTRIBUTES)
        if unknown:
            raise TypeError(f"unknown special token name(s): {sorted(unknown)}")
        self.source = source
        self.special_tokens = {**(special_tokens or {}), **{k: v for k, v in named_tokens.items() if v is not None}}
        self._clock = _clock(now)
        self._template = _compile(source)

    @classmethod
    def from_file(cls, path: str | Path, *, tokenizer: str | Path | None = None, now: Any = None,
                  **named_tokens: str) -> "ChatTemplate":
        """Load ``path``; the special tokens come from ``tokenizer`` (a tokenizer directory or config file)."""
        source = Path(path).read_text(encoding="utf-8")
        special = special_tokens_from_config(tokenizer) if tokenizer is not None else {}
        return cls(source, special_tokens=special, now=now, **named_tokens)

    @classmethod
    def from_pretrained(cls, folder: str | Path, *, name: str | None = None, now: Any = None) -> "ChatTemplate":
        """The chat template and special tokens shipped in a tokenizer directory."""
        source = chat_template_from_config(folder, name)
        if source is None:
            raise ValueError(f"no chat template found in {folder}")
        return cls(source, special_tokens=special_tokens_from_config(folder), now=now)

    @property
    def variables(self) -> frozenset[str]:
        """The top-level variables this template reads."""
        return template_variables(self.source)

    def render(self, messages: Iterable[Any], tools: Iterable[Any] | None = None, *,
               documents: Iterable[Any] | None = None, add_generation_prompt: bool = False,
               drop_none: bool = True, **variables: Any) -> str:
        """Render like ``apply_chat_template(messages, tools, tokenize=False, ...)``.

        Extra keyword arguments become template variables (``enable_thinking=False``...); they override
        the special tokens. Raises :class:`TemplateRefused` when the template calls ``raise_exception`` and
        :class:`TemplateRenderError` for any other failure inside the template.
        """
        messages = prepare_messages(messages, drop_none=drop_none)
        tools = prepare_tools(tools)
        documents = plain_data(list(documents)) if documents is not None else None
        context = plain_data({**self.special_tokens, **variables})
        clock = self._clock

        def strftime_now(fmt: str) -> str:
            return clock().strftime(fmt)

        context = {"strftime_now": strftime_now, **context}
        try:
            return self._template.render(messages=messages, tools=tools, documents=documents,
                                         add_generation_prompt=add_generation_prompt, **context)
        except _Refusal as exc:
            raise TemplateRefused(exc) from exc
        except Exception as exc:  # anything the template does wrong is the template's failure on this input
            raise TemplateRenderError(exc) from exc


def decode_arguments(messages: Iterable[Any], *, arguments: str = "object") -> list[Any]:
    """OpenAI request messages with each tool call's JSON-string ``arguments`` decoded to an object, as
    serving stacks do before a template sees them (``arguments="string"`` leaves them as JSON text, for
    templates that concatenate them). Text that is not a JSON object is left as it is."""
    if arguments not in ("object", "string"):
        raise ValueError("arguments must be 'object' or 'string'")
    out = []
    for message in messages:
        message = _as_dict(message)
        calls = message.get("tool_calls") if isinstance(message, Mapping) else None
        if calls:
            message = {**message, "tool_calls": [_decode_call(_as_dict(c), arguments) for c in calls]}
        out.append(message)
    return out


def _decode_call(call: Any, mode: str) -> Any:
    fn = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(fn, Mapping):
        return call
    args = fn.get("arguments")
    if mode == "object" and isinstance(args, str):
        try:
            value = json.loads(args)
        except ValueError:
            return call
        if isinstance(value, dict):
            return {**call, "function": {**fn, "arguments": value}}
    elif mode == "string" and isinstance(args, Mapping):
        return {**call, "function": {**fn, "arguments": json.dumps(args, ensure_ascii=False)}}
    return call


__all__ = [
    "ChatTemplate", "TemplateRenderError", "TemplateRefused", "template_variables", "prepare_messages",
    "prepare_tools", "plain_data", "special_tokens_from_config", "chat_template_from_config",
    "decode_arguments", "SPECIAL_TOKEN_ATTRIBUTES", "REASONING_FIELDS",
]
