"""Llama JSON calls (``llama31``, ``llama32``, ``llama4``; parsers :class:`~toolwire.parsers.llama.LlamaParser`,
:class:`~toolwire.parsers.llama4.Llama4Parser`).

* Llama 3.1 / 3.2: the reply *is* one call object ``{"name": NAME, "parameters": ARGS}`` (the template writes
  exactly one call per turn) or it is text. There is no marker: the call's head ``{"name": "`` is the
  trigger, the call must open the output (``calls_first``) and end it (``last_region``). Free text never
  spells the trigger nor ``<|python_tag|>`` (built-in calls, which the grammar does not write).
* Llama 4: ``<|python_start|>`` TEXT ``<|python_end|>`` then the call objects back to back, opening and ending
  the output; neither the block's text nor free text spells a call head (calls inside the block are a variant
  the parser repairs, and a reply opening with one is read as Llama 3.1 calls).

The call object is JSON as the templates' ``json_dumps`` writes it (:func:`.json_calls.call_object`, with
``parameters``); markers come from the parsers' ``MARKERS``.
"""

from __future__ import annotations

from toolwire.parsers.llama import PYTHON_TAG
from toolwire.parsers.llama4 import PY_END, PY_START

from ..ir import Alt, CallWire, Lit, Seq, Star, Tag, Text
from . import describes
from .json_calls import call_object, json_string

ARGS_KEY = "parameters"
"""The key Llama writes the arguments under."""
CALL_HEAD = "{" + json_string("name") + ": " + '"'
"""How every call object starts (``{"name": "``): the trigger of a Llama call."""


def call(name: str, schema: dict) -> Seq:
    """``{"name": NAME, "parameters": ARGS}``."""
    return call_object(name, schema, args_key=ARGS_KEY)


@describes("llama31")
def llama31(fmt, request, *, thinking: bool) -> CallWire:
    """The whole reply is one call object, or text."""
    calls = tuple((tool.name, call(tool.name, tool.schema)) for tool in request.tools)
    return CallWire(fmt.name, (CALL_HEAD,), calls, stop_tokens=tuple(fmt.stop_tokens), family="llama",
                    reserved=(PYTHON_TAG,), calls_first=True, last_region=True)


@describes("llama4")
def llama4(fmt, request, *, thinking: bool) -> CallWire:
    """``<|python_start|>TEXT<|python_end|>`` + call objects back to back, as the whole reply (one region for all
    tools: every call of the turn follows the one block)."""
    # each object without its closing brace, so the region ends with a literal (xgrammar's tag needs an end)
    opened = tuple(Seq(call(tool.name, tool.schema).items[:-1]) for tool in request.tools)
    calls = ()
    if opened:
        any_open = Alt(opened) if len(opened) > 1 else opened[0]
        region = Seq((Lit(PY_START), Tag("", Text((CALL_HEAD,)), PY_END), Star(Seq((any_open, Lit("}")))),
                      any_open, Lit("}")))
        calls = ((", ".join(tool.name for tool in request.tools), region),)
    return CallWire(fmt.name, (PY_START,), calls, stop_tokens=tuple(fmt.stop_tokens), family="llama",
                    reserved=(PY_END, CALL_HEAD), calls_first=True, last_region=True)
