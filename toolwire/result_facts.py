"""What each family does with a tool result, learned from its own renderer: probe conversations are rendered once
per format (cached) and read back from their provenance segments.

* ``framing``: the plain-text tags the template writes around a result (DSML V4 ``<tool_result>`` /
  ``</tool_result>``, MiniMax ``<response>``, Qwen2.5 ``<tool_response>``): a result that spells one closes (or
  opens) a result early in the rendered text, and token ids cannot help, since the tag is plain text;
* ``specials``: the control-token spellings the prompt uses (``<|im_end|>``): a result that spells one is
  neutralised by :meth:`~toolwire.RenderedPrompt.token_ids`, which writes request text as plain text;
* ``carries_id`` / ``carries_name``: whether a rendered result shows the call id or the tool name (otherwise its
  position is the model's only link to its call); ``call_order``: whether the template itself puts parallel
  results in call order (DeepSeek V4); ``parallel``: whether the family takes parallel calls at all;
* ``none_content`` / ``parts``: what the template does with a result without content (``empty``, ``dropped``:
  no result block at all, ``repr``: the text ``None``, ``null``: the value ``null``, ``refused``) and with a list
  of text parts (``joined``, ``repr``, ``refused``);
* ``media`` / ``user_media``: the content-part types the family has a media slot for in a tool result and in a
  user message (declared on the Format: ``tool_result_media``, ``user_media``).

These facts are what ``plan()`` warns by (``tool_result_spells_markup``, ``tool_results_out_of_order``,
``tool_result_empty``, ``tool_result_repr``) and what docs/tool-results.md tabulates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .errors import ToolwireError

_A, _B = "\ue010resultA\ue011", "\ue010resultB\ue011"  # private-use sentinels: no marker of any family holds them
_IDS = ("PrbAlpha1", "PrbBravo2")  # 9 characters, as Mistral requires
_NAMES = ("probe_alpha_tool", "probe_bravo_tool")
_TAG = re.compile(r"</?[A-Za-z_][A-Za-z0-9_:.\-]{0,40}>")


@dataclass(frozen=True)
class ResultFacts:
    """What one format's renderer does with tool results (see the module doc)."""

    format: str
    framing: tuple[str, ...]
    specials: frozenset[str]
    carries_id: bool
    carries_name: bool
    call_order: bool
    parallel: bool
    none_content: str
    parts: str
    media: frozenset[str]
    user_media: frozenset[str]

    def spelled(self, text: str) -> tuple[list[str], list[str]]:
        """``(framing tags, special markers)`` that ``text`` spells (each once, in first-found order)."""
        if not text:
            return [], []
        framing = [tag for tag in self.framing if tag in text]
        pattern = _special_pattern(self.specials)
        found: dict[str, None] = {}
        if pattern is not None:
            for match in pattern.finditer(text):
                found.setdefault(match.group(), None)
        return framing, list(found)


@lru_cache(maxsize=64)
def _special_pattern(specials: frozenset[str]) -> "re.Pattern[str] | None":
    if not specials:
        return None
    return re.compile("|".join(re.escape(s) for s in sorted(specials, key=len, reverse=True)))


def _tools() -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": name, "description": "probe", "parameters": {
        "type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}} for name in _NAMES]


def _probe(calls: int, results: list[tuple[int, Any]]) -> list[dict[str, Any]]:
    """user, an assistant making ``calls`` calls, then tool messages ``(call number, content)``."""
    made = [{"id": _IDS[n], "type": "function", "function": {"name": _NAMES[n], "arguments": '{"x": "1"}'}}
            for n in range(calls)]
    return [{"role": "user", "content": "probe"}, {"role": "assistant", "content": "", "tool_calls": made},
            *({"role": "tool", "tool_call_id": _IDS[n], "content": content} for n, content in results)]


def _render(fmt: Any, messages: list) -> Any:
    try:
        return fmt.render(messages, _tools())
    except ToolwireError:
        return None


@lru_cache(maxsize=None)
def result_facts(fmt: Any) -> ResultFacts:
    """The :class:`ResultFacts` of a :class:`~toolwire.Format` (``toolwire.get_format(name)``), rendered once and
    cached."""
    format_name = fmt.name
    parallel = _render(fmt, _probe(2, [(1, _B), (0, _A)]))
    single = parallel or _render(fmt, _probe(1, [(0, _A)]))
    if single is None:
        raise ToolwireError(f"{format_name}: a call and its result cannot be rendered, so nothing can be learned")
    pieces = single.pieces
    framing: dict[str, None] = {}
    specials = {text for kind, text, _ in pieces if kind == "special"} | set(fmt.stop_tokens)
    carries_id = carries_name = False
    for index in sorted({i for _, text, i in pieces if i is not None and (_A in text or _B in text)}):
        own = [(kind, text) for kind, text, i in pieces if i == index]
        shown = "".join(text for kind, text in own if not (kind == "content" and (_A in text or _B in text)))
        carries_id = carries_id or any(cid in shown for cid in _IDS)
        carries_name = carries_name or any(name in shown for name in _NAMES)
        for kind, text in own:
            if kind == "template":
                for tag in _TAG.findall(text):
                    framing.setdefault(tag, None)
    call_order = parallel is not None and parallel.text.find(_A) < parallel.text.find(_B)
    return ResultFacts(format=format_name, framing=tuple(framing), specials=frozenset(specials),
                       carries_id=carries_id, carries_name=carries_name, call_order=call_order,
                       parallel=parallel is not None, none_content=_none_content(fmt),
                       parts=_parts(fmt), media=frozenset(fmt.tool_result_media), user_media=frozenset(fmt.user_media))


def _tool_pieces(prompt: Any) -> list:
    return [(kind, text) for kind, text, i in prompt.pieces if i == 2]


def _none_content(fmt: Any) -> str:
    """What the template does with a tool message whose content is None (compared with an empty string)."""
    empty = _render(fmt, _probe(1, [(0, "")]))
    none = _render(fmt, _probe(1, [(0, None)]))
    if none is None:
        return "refused"
    with_none, with_empty = _tool_pieces(none), _tool_pieces(empty) if empty is not None else []
    if with_none == with_empty:
        return "empty"
    if any(kind == "content" and "None" in text for kind, text in with_none):
        return "repr"
    rest = iter(with_empty)
    if len(with_none) < len(with_empty) and all(piece in rest for piece in with_none):
        return "dropped"  # what is left is some of the empty result's pieces, in order: the result block is gone
    return "null" if "null" in "".join(text for _, text in with_none) else "other"


def _parts(fmt: Any) -> str:
    """What the template does with a tool message whose content is a list of two text parts."""
    prompt = _render(fmt, _probe(1, [(0, [{"type": "text", "text": _A}, {"type": "text", "text": _B}])]))
    if prompt is None:
        return "refused"
    shown = "".join(text for _, text in _tool_pieces(prompt))
    if "'type'" in shown or '"type"' in shown:
        return "repr"
    return "joined"




def markdown_table(formats: Any) -> str:
    """The per-family table of docs/tool-results.md for ``formats`` (Format objects, e.g. ``[toolwire.get_format(n)
    for n in toolwire.formats()]``), one row each: media slots, plain-text framing, what a result shows, parallel
    results, ``None`` content, text parts."""

    def listed(values: Any) -> str:
        return ", ".join(f"`{v}`" for v in sorted(values)) or "none"

    lines = ["| format | media in a tool result | media in a user message | plain-text result framing | a result "
             "shows | parallel results | `None` content | text parts |", "|---|---|---|---|---|---|---|---|"]
    for fmt in formats:
        f = result_facts(fmt)
        shows = "the call id" if f.carries_id else "the tool name" if f.carries_name else "neither"
        parallel = "one call per message" if not f.parallel else "in call order" if f.call_order else "as given"
        framing = ", ".join(f"`{t}`" for t in f.framing) or "none"
        lines.append(f"| {fmt.name} | {listed(f.media)} | {listed(f.user_media)} | {framing} | {shows} | {parallel} | "
                     f"{f.none_content} | {f.parts} |")
    return "\n".join(lines)


__all__ = ["ResultFacts", "result_facts", "markdown_table"]
