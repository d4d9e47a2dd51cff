"""Documented divergences: the places where a model's official template loses or refuses data and toolwire
deliberately does not follow it (``docs/fidelity.md`` lists them with the reasons).

A divergence is narrow: it names the check it excuses and a test on the result that holds only for that loss,
and it applies only to the families whose declaration lists it (``Family.template_losses``, a fact about the
family's official template). Any other difference, in these formats too, stays a difference (real drift still
fails). Adding one is adding a row to :data:`DIVERGENCES`, its name to the families' ``template_losses`` and a
section to ``docs/fidelity.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from toolwire.families import declared
from toolwire.parsers.kimi import ID_NAMES_NO_TOOL

if TYPE_CHECKING:  # annotations only: fidelity imports this module
    from .fidelity import ScenarioResult


@dataclass(frozen=True)
class Divergence:
    """One documented difference. ``applies(result)`` is true only when the result shows exactly this loss."""

    name: str
    check: str            # "bytes" or "round_trip"
    reason: str
    applies: Callable[["ScenarioResult"], bool]


def _list_contents(result: "ScenarioResult") -> list[list]:
    return [m["content"] for m in result.scenario.messages
            if isinstance(m, dict) and isinstance(m.get("content"), list)]


def _template_loses_parts(result: "ScenarioResult") -> bool:
    """toolwire refused list content, and the template rendered a prompt in which the parts' text, joined as
    written, does not appear (dropped, or printed as a Python list)."""
    if result.native is not None or result.template_text is None or result.native_code != "unsupported_by_format":
        return False
    lists = _list_contents(result)
    if not lists:
        return False
    joined = ["\n\n".join(p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text")
              for parts in lists]
    return any(text not in result.template_text for text in joined)


def _same_text(result: "ScenarioResult") -> bool:
    got, want = result.read_back, result.wanted
    return got is not None and want is not None and got[:2] == want[:2]


def _call_ids_read_as_names(result: "ScenarioResult") -> bool:
    """Every call came back with its id as its name and its arguments intact (the id was in the name slot), or
    with its own name only through the recovery of an id that names no tool (``drift_call_id_names_no_tool``: the
    declared tools told which call it was)."""
    if not _same_text(result):
        return False
    last = result.scenario.messages[-1]
    ids = [c.get("id") for c in last.get("tool_calls") or []]
    got, want = result.read_back[2], result.wanted[2]
    recovered = ID_NAMES_NO_TOOL in result.recovered
    return bool(ids) and len(got) == len(want) and all(
        g_args == w_args and cid != w_name and (g_name == cid or recovered and g_name == w_name)
        for (g_name, g_args), (w_name, w_args), cid in zip(got, want, ids))


def _only_first_call_kept(result: "ScenarioResult") -> bool:
    """A message with several calls came back with exactly its first call."""
    return _same_text(result) and len(result.wanted[2]) > 1 and result.read_back[2] == result.wanted[2][:1]


DIVERGENCES: tuple[Divergence, ...] = (
    Divergence(
        "content_parts_lost", "bytes",
        "the template drops list content (Qwen3: renders an empty turn; Laguna: empty text) or prints it as a "
        "Python list (Llama 3.1 / 3.2, Nemotron 3) or as JSON text (GigaChat 3.5); "
        "toolwire refuses it with unsupported_by_format (join_content_parts=True joins the parts)",
        _template_loses_parts),
    Divergence(
        "call_id_in_name_slot", "round_trip",
        "the template writes each call's id where Kimi's functions.NAME:IDX goes; an id in another form (the "
        "corpus uses 9-character ids) replaces the tool name, so the output reads back with the id as the name",
        _call_ids_read_as_names),
    Divergence(
        "first_call_only", "round_trip",
        "the template renders only the first tool call of an assistant message; the others are lost",
        _only_first_call_kept),
)


def divergence_for(format_name: str, check: str, result: Any) -> Divergence | None:
    """The documented divergence that explains this differing check, or None (then it is a real difference)."""
    family = declared().get(format_name)
    losses = family.template_losses if family is not None else ()
    for div in DIVERGENCES:
        if div.check == check and div.name in losses and div.applies(result):
            return div
    return None


__all__ = ["Divergence", "DIVERGENCES", "divergence_for"]
