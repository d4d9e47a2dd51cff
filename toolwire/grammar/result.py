"""The value :meth:`toolwire.Format.grammar` returns: one grammar for one target, ready to hand to it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Grammar:
    """A constraint for one format, one set of tools and one ``tool_choice``, in one target's form.

    ``target``        ``"xgrammar"``, ``"llguidance"`` or ``"gbnf"``.
    ``format``        the toolwire format name; ``mode``: ``auto``, ``required``, ``none`` or ``named``.
    ``text``          the grammar text (llguidance: Lark; gbnf: GBNF; xgrammar: the structural tag as JSON).
    ``structural_tag`` the xgrammar structural tag as a dict (xgrammar only, else None).
    ``triggers``      the strings that start a tool call in content (every target).
    ``lazy``          gbnf: whether llama.cpp should apply the grammar only from a trigger on
                      (``grammar_lazy``); ``grammar_triggers`` then holds them in llama.cpp's JSON form.
    ``stop_tokens``   the format's end-of-turn tokens, which end generation after the grammar allows it.
    ``notes``         where the grammar is narrower than what the parser accepts (see docs/grammar.md).
    """

    target: str
    format: str
    mode: str
    text: str
    structural_tag: dict | None = None
    triggers: tuple[str, ...] = ()
    lazy: bool = False
    grammar_triggers: tuple = ()
    stop_tokens: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> str:
        """The target's own JSON request form: xgrammar, the structural tag; llguidance, the
        ``{"grammars": [{"lark_grammar": ...}]}`` top-level grammar; gbnf, llama.cpp server fields."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        """:meth:`to_json` as a dict."""
        if self.target == "xgrammar":
            return self.structural_tag
        if self.target == "llguidance":
            return {"grammars": [{"lark_grammar": self.text}]}
        return self.llama_cpp_fields()

    def llama_cpp_fields(self) -> dict[str, Any]:
        """The llama.cpp server request fields (gbnf only): ``grammar``, ``grammar_lazy``, ``grammar_triggers``."""
        if self.target != "gbnf":
            raise ValueError(f"llama.cpp fields are for the gbnf target, not {self.target!r}")
        return {"grammar": self.text, "grammar_lazy": self.lazy, "grammar_triggers": [dict(t) for t in
                                                                                     self.grammar_triggers]}

    def xgrammar(self):
        """An ``xgrammar.StructuralTag`` (xgrammar target; needs the ``toolwire[grammar]`` extra)."""
        if self.target != "xgrammar":
            raise ValueError(f"an xgrammar StructuralTag is for the xgrammar target, not {self.target!r}")
        from toolwire.errors import MissingExtra

        try:
            import xgrammar
        except ImportError:
            raise MissingExtra("the xgrammar target's objects need xgrammar: pip install 'toolwire[grammar]'") from None
        return xgrammar.StructuralTag.from_json(self.structural_tag)

    def llguidance(self) -> str:
        """The grammar string ``llguidance.LLMatcher(tokenizer, grammar)`` takes (llguidance target)."""
        if self.target != "llguidance":
            raise ValueError(f"an llguidance grammar is for the llguidance target, not {self.target!r}")
        return self.text
