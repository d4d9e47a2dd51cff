"""CallWire -> xgrammar structural tag (the JSON form xgrammar 0.2.8 validates as ``xgrammar.StructuralTag``).

* ``auto``: ``triggered_tags`` (free text; a trigger starts a call tag, text may follow it);
* ``required`` / named tool: the same with ``at_least_one`` (xgrammar's rule: the answer starts with a call;
  text may follow the calls);
* ``none``: ``any_text`` that ``excludes`` the triggers (no call can start);
* free text (outside calls, and reasoning) also ``excludes`` the format's stop tokens spelled as text;
* a section format (calls inside one block): one triggered tag for the block whose content is
  ``tags_with_separator`` over the calls;
* reasoning the prompt opened: a ``sequence`` of a tag ``"" any_text </think>`` (its text excludes the call
  triggers, like the parser, which rejects a call inside reasoning) and the above.

Node mapping: literal -> ``const_string``, JSON -> ``json_schema``, tag -> ``tag`` (free text inside it ->
``any_text``: xgrammar ends it at the tag's end string, so a value cannot contain its closing marker), sequence
-> ``sequence``, choice -> ``or`` (an optional part -> ``optional``).
"""

from __future__ import annotations

from typing import Any

from .ir import Alt, CallWire, Chars, FreeText, Json, Lit, Seq, Star, Tag, Text, flatten, split_tag


BLANK = r"[ \t\r\n]*"
"""What may sit between a closed reasoning block and a call that must come first (the parser's framing)."""


def node_format(node) -> dict[str, Any]:
    """One IR node as an xgrammar format dict."""
    if isinstance(node, Lit):
        return {"type": "const_string", "value": node.text}
    if isinstance(node, Json):
        out = {"type": "json_schema", "json_schema": node.schema}
        if node.excludes:
            out["excludes"] = list(node.excludes)
        return out
    if isinstance(node, Tag) and not node.end and isinstance(node.content, (FreeText, Text)):  # text to the end
        text = {"type": "any_text", "excludes": list(getattr(node.content, "excludes", ()))}
        return {"type": "sequence", "elements": [node_format(Lit(node.begin)), text]} if node.begin else text
    if isinstance(node, Tag):
        if isinstance(node.content, FreeText):
            content = {"type": "any_text"}
        elif isinstance(node.content, Text):
            content = {"type": "any_text", "excludes": list(node.content.excludes)}
        else:
            content = node_format(node.content)
        return {"type": "tag", "begin": node.begin, "content": content, "end": node.end}
    if isinstance(node, Seq):
        items = flatten(node)
        if len(items) == 1:
            return node_format(items[0])
        return {"type": "sequence", "elements": [node_format(i) for i in items]}
    if isinstance(node, Chars):
        return {"type": "regex", "pattern": node.regex()}
    if isinstance(node, Star):
        return {"type": "star", "content": node_format(node.item)}
    if isinstance(node, Alt):
        rest = [i for i in node.items if i != Lit("")]
        if len(rest) < len(node.items):  # an optional part
            inner = rest[0] if len(rest) == 1 else Alt(tuple(rest))
            return {"type": "optional", "content": node_format(inner)}
        return {"type": "or", "elements": [node_format(i) for i in node.items]}
    raise TypeError(f"free text outside a tag cannot be emitted ({node!r})")


def call_tag(node) -> dict[str, Any]:
    """One call as a ``tag``: the literal text it starts and ends with as begin / end."""
    begin, middle, end = split_tag(node)
    if not middle:
        content: dict[str, Any] = {"type": "const_string", "value": ""}
    elif len(middle) == 1:
        content = node_format(middle[0])
    else:
        content = {"type": "sequence", "elements": [node_format(i) for i in middle]}
    return {"type": "tag", "begin": begin, "content": content, "end": end}


def structural_tag(wire: CallWire, mode: str, *, thinking: bool) -> dict[str, Any]:
    """The ``{"type": "structural_tag", "format": ...}`` dict for ``wire`` in ``mode``."""
    if wire.whole is not None:
        return {"type": "structural_tag", "format": node_format(wire.whole)}
    banned = wire.banned()  # free text never starts a call nor spells the end of turn
    if mode == "none" or not wire.calls:
        body: dict[str, Any] = {"type": "any_text", "excludes": banned}
    else:
        tags = [call_tag(node) for node in wire.call_nodes()]
        if wire.section is not None:
            inner = {"type": "tags_with_separator", "tags": tags, "separator": wire.section.separator,
                     "at_least_one": True, "stop_after_first": False}
            tags = [{"type": "tag", "begin": wire.section.begin, "content": inner, "end": wire.section.end}]
        body = {"type": "triggered_tags", "triggers": list(wire.triggers), "tags": tags,
                "at_least_one": mode in ("required", "named"), "stop_after_first": wire.last_region,
                # xgrammar checks excludes across a trigger too: a word inside a trigger (DSML's block opener inside
                # "\n\n" + opener) would block the trigger itself, so it is left out (docs/grammar.md)
                "excludes": [b for b in banned if not any(b in t for t in wire.triggers)]}
    if wire.calls_first and mode == "auto" and wire.calls:  # calls open the output, or there is no call
        body = {"type": "or", "elements": [dict(body, at_least_one=True), {"type": "any_text", "excludes": banned}]}
    if wire.reasoning is not None and (thinking or wire.self_reasoning):
        text = {"type": "any_text", "excludes": [b for b in banned if b != wire.reasoning[1]]}  # no opener, no call
        reasoning = {"type": "tag", "begin": "" if thinking else wire.reasoning[0], "content": text,
                     "end": wire.reasoning[1]}
        if not thinking:  # the model may open it itself, as the first thing it writes
            if wire.reasoning_lead:
                lead = {"type": "optional", "content": {"type": "const_string", "value": wire.reasoning_lead}}
                reasoning = {"type": "sequence", "elements": [lead, reasoning]}
            reasoning = {"type": "optional", "content": reasoning}
        gap = [{"type": "regex", "pattern": BLANK}] if mode in ("required", "named") and wire.calls else []
        body = {"type": "sequence", "elements": [reasoning, *gap, body]}
    return {"type": "structural_tag", "format": body}
