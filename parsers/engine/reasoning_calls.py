"""A call left inside reasoning that never closed (issue 33, class ``missing_markers``).

Reasoning models (Qwen3, GLM, DeepSeek, Kimi K2-Thinking, MiniMax-M2 ...) sometimes write their tool call inside
the reasoning and end the output there, without the reasoning closer (``</think>`` never written; often the
prompt opened ``<think>`` itself). Such a call is read as a call in reasoning (``source="reasoning"``,
``rejected`` with ``call_in_reasoning``); this module decides, once the output has ended, whether it is
recovered: each complete call the output ends with, inside reasoning that never closed, whose name is declared
and whose arguments fit its schema, becomes ``repaired`` with the diagnostic
``drift_call_in_unclosed_reasoning`` (its ``raw`` the call's argument text as written, or its name when it has
none). Only blanks, the call block's own markup, the family's stop token or another such call may follow it: text
after a call inside the reasoning means the model went on reasoning, so the call may have been a draft or an
example, and it is not recovered. A call cut off, with an undeclared name, with errors, or whose arguments do not
fit stays ``rejected``
with ``call_in_reasoning``, and an ``info`` diagnostic with the code says why (on the output, naming the call).
Without declared tools, with ``promote_reasoning_calls=True`` or when the reasoning closed, nothing changes and
nothing is said.

**Streaming.** The decision needs the end of the output, and a stream never takes back what it sent, so the
:class:`~toolwire.output.ToolCallFinished` event of a call in reasoning (the one event that carries the
candidate and its status) is held while only blanks follow it: blank reasoning after it is held with it (so the
events keep their order and token spans). The first other text, a content call or content releases it as it was
(``rejected``: text after it or a closed reasoning means it cannot be recovered); the end of the output releases it
with its final status. ``ToolCallStarted`` (``source="reasoning"``) and the argument fragments stream as before.
The stream parser (:class:`~toolwire.parsers.engine.stream.StreamParser`) calls :class:`UnclosedReasoningCalls`
from its call-finish, reasoning, content and call-start paths; each family says whether its output ended inside
the reasoning (``StreamParser._reasoning_unclosed``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolwire.output import ReasoningDelta, ToolCallFinished

from .drift import DeclaredTools, Drift, drift_diagnostic, refused_diagnostic, register
from .tools import tool_schemas

if TYPE_CHECKING:
    from .stream import StreamParser

CODE = "drift_call_in_unclosed_reasoning"
register(Drift.MISSING_MARKERS, CODE)

_BLANKS = " \t\r\n"


class UnclosedReasoningCalls:
    """One stream's calls in reasoning whose fate waits for the end of the output (see the module docstring)."""

    __slots__ = ("names", "declared", "held", "blanks", "passed")

    def __init__(self, names: frozenset[str]):
        self.names = names
        self.declared: DeclaredTools | None = None  # read from the tools when a call is judged (rarely needed)
        self.held: list[ToolCallFinished] = []  # finished calls in reasoning with only blanks after them so far
        self.blanks: list[str] = []  # blank reasoning after them, held with them (their order kept)
        self.passed: list[int] = []  # calls in reasoning that reasoning text followed (not recoverable)

    @classmethod
    def of(cls, parser: "StreamParser") -> "UnclosedReasoningCalls | None":
        """The watch for ``parser``, or None when no call can be recovered: no declared tools, calls in reasoning
        promoted, or a family without a reasoning block."""
        family = parser.family
        if parser.promote_reasoning_calls or family is None or not family.reasoning or not parser._names:
            return None
        return cls(parser._names)

    # ---- while the output streams
    def hold(self, parser: "StreamParser", event: ToolCallFinished) -> None:
        """A call in reasoning finished: its event waits (blanks before it were already sent)."""
        if self.blanks:
            self._send_blanks(parser)
        self.held.append(event)

    def reasoning(self, parser: "StreamParser", text: str) -> bool:
        """Reasoning text while calls are held: blanks (and the family's stop token, which a family may keep in
        its reasoning) are held with them (True); other text releases them, not recoverable (False: the caller
        sends the text)."""
        rest = text.strip(_BLANKS)
        if not rest or rest in parser.family.stop_tokens:  # a stop token left at the end is not more reasoning
            self.blanks.append(text)
            return True
        self.passed.extend(event.index for event in self.held)
        self.release(parser)
        return False

    def markup(self, parser: "StreamParser") -> None:
        """Reasoning text that is a call block's own markup (DSML keeps its block in the reasoning): the held
        blanks go first, the calls stay held."""
        if self.blanks:
            self._send_blanks(parser)

    def release(self, parser: "StreamParser") -> None:
        """Send the held events as they are (the reasoning closed, or text followed), then the held blanks."""
        for event in self.held:
            parser._events.append(event)
            parser._candidates.append(event.candidate)
        self.held = []
        if self.blanks:
            self._send_blanks(parser)

    def _send_blanks(self, parser: "StreamParser") -> None:
        text = "".join(self.blanks)
        self.blanks = []
        parser._reasoning.append(text)
        parser._events.append(ReasoningDelta(text))

    # ---- at the end of the output
    def settle(self, parser: "StreamParser") -> None:
        """End of output: when the reasoning never closed, recover each held call that fits and say why the others
        are not recovered; then release everything."""
        if parser._reasoning_unclosed():
            self.held = [self._decide(parser, event) for event in self.held]
            for index in self.passed:
                parser._diagnostics.append(_refused("the reasoning goes on after the call (text follows it inside "
                                                    "the reasoning), so it may be a draft or an example", None,
                                                    index))
        self.passed = []
        self.release(parser)

    def _decide(self, parser: "StreamParser", event: ToolCallFinished) -> ToolCallFinished:
        if self.declared is None:
            self.declared = DeclaredTools(parser._names or self.names, tool_schemas(parser.tools))
        cand = event.candidate
        raw = cand.raw_arguments or cand.name
        why = self._why_not(cand)
        if why is not None:
            parser._diagnostics.append(_refused(why, raw, cand.index))
            return event
        closer = parser.family.reasoning[1]
        kept = [d for d in cand.diagnostics if d.code != "call_in_reasoning"]
        note = drift_diagnostic(CODE, f"the output ended inside the reasoning (no {closer!r}) right after a complete "
                                f"call to {cand.name!r}; taken as the call", raw, cand.index)
        repaired = cand.model_copy(update={"status": "repaired", "diagnostics": kept + [note]})
        return ToolCallFinished(event.index, repaired)

    def _why_not(self, cand) -> str | None:
        """Why a call in reasoning that never closed is not recovered (None: it is)."""
        if cand.status == "truncated" or any(d.code.startswith("truncated") for d in cand.diagnostics):
            return "the call is cut off"
        if cand.name not in self.declared.names:
            return f"{cand.name!r} is not a declared tool"
        errors = [d.code for d in cand.diagnostics if d.severity == "error" and d.code != "call_in_reasoning"]
        if errors:
            return f"the call has errors ({', '.join(errors)})"
        if not self.declared.arguments_fit(cand.name, cand.arguments):
            return f"its arguments do not fit the schema of {cand.name!r}"
        return None


def _refused(why: str, raw: str | None, index: int):
    return refused_diagnostic(CODE, why, raw).model_copy(update={"call_index": index})


def recovered_in_reasoning(candidate) -> bool:
    """Whether ``candidate`` is a call written inside reasoning that never closed, recovered as a call (what the
    serving adapters send as a call, and what validation does not refuse as ``call_in_reasoning``)."""
    return candidate.source == "reasoning" and candidate.status == "repaired" and any(
        d.code == CODE and d.severity != "info" for d in candidate.diagnostics)


__all__ = ["CODE", "UnclosedReasoningCalls", "recovered_in_reasoning"]
