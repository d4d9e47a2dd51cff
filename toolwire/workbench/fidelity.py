"""``toolwire fidelity``: check, scenario by scenario and token by token, that a native renderer and a
model's published chat template agree.

For every scenario of the built-in corpus (``fixtures/scenarios.jsonl``) and the user's own (``--corpus``):

* **bytes**: the native prompt and the template's prompt are equal, or both refuse the request;
* **tokens** (with ``--tokenizer``): the native ids (:meth:`RenderedPrompt.token_ids`) equal the template
  prompt's ids, where control tokens count only where the template wrote them (request text that spells a
  control token is plain text on both sides, as transformers' ``sanitize_control_tokens`` does);
* **round trip** (scenarios ending with an assistant turn): the turn rendered as model output and parsed
  back gives the same content, reasoning and tool calls.

A check the template fails by a documented loss (``divergences.DIVERGENCES``, listed in ``docs/fidelity.md``)
is ``diverge``, not ``differ``. The exit code is 0 when no check differs (skipped scenarios and documented
divergences do not count), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Iterable

from toolwire.errors import InvalidOption, ToolwireError
from toolwire.parsers.engine.drift import drift_class
from toolwire.registry import get_format

from .divergences import divergence_for
from .inputs import BadInput, missing_extra, read_text, write_output

STRING_ARGUMENT_FORMATS = frozenset({"deepseek_r1"})
"""Formats whose template concatenates ``arguments`` as JSON text (the golden vectors feed them strings)."""

_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use sentinels around control-token text in request strings


# ---------------------------------------------------------------- scenarios

@dataclass
class Scenario:
    """One conversation to render both ways. ``options`` are toolwire render options."""

    id: str
    messages: list
    tools: list | None = None
    options: dict = field(default_factory=dict)
    description: str = ""
    tags: list = field(default_factory=list)
    source: str = "builtin"


def builtin_corpus_path() -> Path:
    """The built-in scenario corpus (``fixtures/scenarios.jsonl`` of the source tree)."""
    try:
        from importlib.resources import files

        packaged = files("toolwire.fixtures") / "scenarios.jsonl"
        if packaged.is_file():
            return Path(str(packaged))
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parents[2] / "fixtures" / "scenarios.jsonl"


def load_scenarios(path: str | Path, source: str = "builtin") -> list[Scenario]:
    """Scenarios from a JSON-lines file: ``{id, messages, tools?, options?, description?, tags?}`` per line."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict) or not isinstance(row.get("messages"), list):
                raise ValueError(f"{path}:{lineno}: a scenario is an object with a 'messages' list")
            out.append(Scenario(id=str(row.get("id") or f"{Path(path).stem}:{lineno}"), messages=row["messages"],
                                tools=row.get("tools"), options=dict(row.get("options") or {}),
                                description=row.get("description", ""), tags=list(row.get("tags") or []),
                                source=source))
    return out


# ---------------------------------------------------------------- results

@dataclass
class Check:
    """One comparison: ``status`` is ``match``, ``differ``, ``diverge`` (a documented divergence, named in
    ``divergence``) or ``skip``; ``detail`` says why."""

    status: str
    detail: str = ""
    divergence: str | None = None


@dataclass
class ScenarioResult:
    """Everything known about one scenario after both renders."""

    scenario: Scenario
    native: Any = None              # RenderedPrompt, or None when refused / not applicable
    native_error: str | None = None
    native_code: str | None = None  # the error code when the native renderer refused
    template_text: str | None = None
    template_error: str | None = None
    bytes: Check = field(default_factory=lambda: Check("skip"))
    tokens: Check = field(default_factory=lambda: Check("skip", "no tokenizer"))
    round_trip: Check = field(default_factory=lambda: Check("skip", "does not end with an assistant turn"))
    native_ids: list | None = None
    template_ids: list | None = None
    wanted: tuple | None = None      # round trip: (content, reasoning, [(name, arguments)]) of the last turn
    read_back: tuple | None = None   # ... and what parsing its rendering gave
    recovered: tuple = ()            # ... and the drift recoveries that reading needed (each a problem)

    @property
    def checks(self) -> tuple[Check, Check, Check]:
        return self.bytes, self.tokens, self.round_trip

    @property
    def matches(self) -> bool:
        """No check differs (a documented divergence is not a difference)."""
        return all(c.status != "differ" for c in self.checks)

    @property
    def divergences(self) -> list[str]:
        """Names of the documented divergences this scenario shows."""
        return [c.divergence for c in self.checks if c.status == "diverge" and c.divergence]


@dataclass
class Report:
    """A whole run: the settings and one result per scenario."""

    format: str
    template: str
    tokenizer: str | None
    date: str
    results: list[ScenarioResult]
    options: dict = field(default_factory=dict)      # family options every scenario was rendered with
    selection: dict | None = None  # without --format: {"candidates": {format: matching scenarios}, "why": text}

    @property
    def ok(self) -> bool:
        return all(r.matches for r in self.results)

    def counts(self, name: str) -> dict[str, int]:
        """``{match, differ, diverge, skip}`` counts of one check (``bytes``, ``tokens`` or ``round_trip``)."""
        out = {"match": 0, "differ": 0, "diverge": 0, "skip": 0}
        for r in self.results:
            out[getattr(r, name).status] += 1
        return out

    def differing(self) -> list[str]:
        """Ids of the scenarios with any differing check."""
        return [r.scenario.id for r in self.results if not r.matches]

    def divergences(self) -> dict[str, list[str]]:
        """Each documented divergence seen, with the ids of the scenarios that show it."""
        out: dict[str, list[str]] = {}
        for r in self.results:
            for name in r.divergences:
                out.setdefault(name, []).append(r.scenario.id)
        return out


# ---------------------------------------------------------------- comparing

def first_difference(a: str, b: str) -> int:
    """Index of the first character where ``a`` and ``b`` differ (``min(len)`` when one is a prefix)."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def describe_difference(a: str, b: str, *, context: int = 40, names: tuple[str, str] = ("native", "template")) -> str:
    """Where two texts first differ, with the surrounding text of each shown escaped."""
    i = first_difference(a, b)
    line = a.count("\n", 0, i) + 1
    col = i - (a.rfind("\n", 0, i) + 1) + 1
    start = max(0, i - context)

    def show(text: str) -> str:
        head = ("…" if start else "") + _escape(text[start:i])
        tail = _escape(text[i:i + context]) + ("…" if i + context < len(text) else "")
        return f"{head}⟦{tail}" if i < len(text) else f"{head}⟦(end)"

    width = max(len(x) for x in names)
    return (f"first difference at char {i} (line {line}, column {col}); lengths {len(a)} vs {len(b)}\n"
            f"  {names[0]:<{width}} | {show(a)}\n  {names[1]:<{width}} | {show(b)}")


def _escape(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _mark(value: Any, finder: re.Pattern | None) -> Any:
    """Wrap control-token text inside request strings in sentinels (dict keys are left alone)."""
    if isinstance(value, str):
        value = value.replace(_OPEN, "").replace(_CLOSE, "")
        return finder.sub(lambda m: f"{_OPEN}{m.group()}{_CLOSE}", value) if finder is not None else value
    if isinstance(value, dict):
        return {k: _mark(v, finder) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mark(v, finder) for v in value]
    return value


def template_segments(marked: str, vocab: Any) -> list[tuple[str, str, None]]:
    """A marked template render as segments: control tokens outside sentinels are ``special``, text inside
    sentinels (request text spelling a control token) is ``content``, the rest ``template``."""
    segments: list[tuple[str, str, None]] = []
    for i, part in enumerate(re.split(f"{_OPEN}([^{_OPEN}{_CLOSE}]*){_CLOSE}", marked)):
        part = part.replace(_OPEN, "").replace(_CLOSE, "")  # lone sentinels (the template split a string)
        if i % 2:
            segments.append(("content", part, None))
            continue
        pos = 0
        for m in vocab.find_controls(part):
            segments += [("template", part[pos:m.start()], None), ("special", m.group(), None)]
            pos = m.end()
        segments.append(("template", part[pos:], None))
    return [s for s in segments if s[1]]


class Comparer:
    """Renders scenarios natively and through the template, and compares them."""

    def __init__(self, format_name: str, template: Any, *, tokenizer: Any = None, on_date: str | None = None,
                 arguments: str = "auto", options: dict | None = None):
        from toolwire.templates.jinja import template_variables

        self.options = dict(options or {})  # family options for every scenario (Granite's version="4.0"...)
        self.fmt = get_format(format_name)
        self.template = template
        self.variables = template_variables(template.source)
        self.tokenizer = tokenizer
        self.date = on_date or date.today().isoformat()
        if arguments == "auto":
            arguments = "string" if format_name in STRING_ARGUMENT_FORMATS else "object"
        self.arguments = arguments
        self.vocab = None
        if tokenizer is not None:
            from toolwire.tokenize import vocabulary

            self.vocab = vocabulary(tokenizer)

    # -- the two renders
    def render_native(self, sc: Scenario, **override: Any):
        options = {**sc.options, **override}
        if "strftime_now" in self.template.source:  # the template prints today's date: pin the same one
            options.setdefault("current_date", self.date)
        return self.fmt.render(sc.messages, sc.tools, **options)

    def _template_call(self, sc: Scenario, messages: list, tools: Any) -> str:
        from toolwire.templates.jinja import decode_arguments

        variables = self.fmt.template_variables(**sc.options)  # the family's declaration maps every option
        add_gen = variables.pop("add_generation_prompt", True)
        convert = getattr(self.fmt, "template_messages", None)  # a family's own request conversion (Ministral 3)
        if convert is not None:
            messages = convert(messages)
        return self.template.render(decode_arguments(messages, arguments=self.arguments), tools,
                                    add_generation_prompt=add_gen, **variables)

    def render_template(self, sc: Scenario) -> str:
        return self._template_call(sc, sc.messages, sc.tools)

    def _with_options(self, sc: Scenario) -> Scenario:
        if not self.options:
            return sc
        return Scenario(sc.id, sc.messages, sc.tools, {**sc.options, **self.options}, sc.description, sc.tags,
                        sc.source)

    # -- the checks
    def compare(self, sc: Scenario) -> ScenarioResult:
        sc = self._with_options(sc)
        res = ScenarioResult(sc)
        native_na = None
        try:
            res.native = self.render_native(sc)
        except InvalidOption as exc:
            native_na = str(exc)
        except ToolwireError as exc:
            res.native_error = f"{exc.code}: {exc}"
            res.native_code = exc.code
        try:
            res.template_text = self.render_template(sc)
        except ToolwireError as exc:
            res.template_error = str(exc)
        if native_na is not None:
            res.bytes = Check("skip", f"the native renderer does not take these options ({native_na})")
            res.tokens = res.round_trip = Check("skip", "see bytes")
            return res
        res.bytes = self._bytes(res)
        if self.tokenizer is not None:
            res.tokens = self._tokens(sc, res)
        if sc.messages and isinstance(sc.messages[-1], dict) and sc.messages[-1].get("role") == "assistant":
            res.round_trip = self._round_trip(sc, res)
        for name in ("bytes", "round_trip"):
            check = getattr(res, name)
            if check.status == "differ":
                div = divergence_for(self.fmt.name, name, res)
                if div is not None:
                    setattr(res, name, Check("diverge", f"{div.name}: {div.reason}. {check.detail}", div.name))
        return res

    def tokenizer_problems(self, scenarios: Iterable[Scenario]) -> list[str]:
        """Why the tokenizer does not fit this format, from the native renders of ``scenarios``: markers the
        format writes as control tokens that the vocabulary lacks, and control tokens of the vocabulary that
        the format writes as plain template text. Empty when it fits (or there is no tokenizer)."""
        from toolwire.tokenize import MarkerNotInVocabulary, encode_segments

        if self.tokenizer is None:
            return []
        missing: dict[str, None] = {}
        extra: dict[str, None] = {}
        for sc in scenarios:
            try:
                prompt = self.render_native(self._with_options(sc))
            except ToolwireError:
                continue
            for seg in prompt.segments:
                if seg.kind == "special" and seg.text not in missing:
                    try:
                        encode_segments([("special", seg.text, None)], self.tokenizer)
                    except MarkerNotInVocabulary:
                        missing[seg.text] = None
                elif seg.kind == "template":
                    for m in self.vocab.find_controls(seg.text):
                        extra[m.group()] = None
        problems = []
        if missing:
            problems.append(f"its control tokens lack {', '.join(map(_quote, missing))} (markers "
                            f"{self.fmt.name} writes as control tokens)")
        if extra:
            problems.append(f"it has {', '.join(map(_quote, extra))} as control tokens (text {self.fmt.name} "
                            "writes as plain template text)")
        return problems

    def _bytes(self, res: ScenarioResult) -> Check:
        if res.native is None and res.template_text is None:
            return Check("match", f"both refuse (native: {res.native_error}; template: {res.template_error})")
        if res.native is None:
            return Check("differ", f"only the native renderer refuses: {res.native_error}")
        if res.template_text is None:
            return Check("differ", f"only the template refuses: {res.template_error}")
        if res.native.text == res.template_text:
            return Check("match")
        return Check("differ", describe_difference(res.native.text, res.template_text))

    def _tokens(self, sc: Scenario, res: ScenarioResult) -> Check:
        from toolwire.tokenize import encode_segments

        if res.native is None or res.template_text is None:
            return Check("skip", "not rendered on both sides")
        try:
            res.native_ids = res.native.token_ids(self.tokenizer)
        except ToolwireError as exc:
            return Check("differ", f"native prompt cannot be encoded: {exc}")
        note = ""
        try:
            pattern = self.vocab.control_pattern
            marked = self._template_call(sc, _mark(sc.messages, pattern), _mark(sc.tools, pattern))
        except ToolwireError:
            marked = None
        if marked is not None and marked.replace(_OPEN, "").replace(_CLOSE, "") == res.template_text:
            res.template_ids = encode_segments(template_segments(marked, self.vocab), self.tokenizer, strict=False)
        else:  # the template transformed request text; fall back to the tokenizer's own reading
            res.template_ids = self.vocab.encode(res.template_text)
            note = " (template ids without request-text sanitizing)"
        if res.native_ids == res.template_ids:
            return Check("match", f"{len(res.native_ids)} tokens{note}")
        i = next((k for k, (x, y) in enumerate(zip(res.native_ids, res.template_ids)) if x != y),
                 min(len(res.native_ids), len(res.template_ids)))
        return Check("differ", f"first difference at token {i} of {len(res.native_ids)} vs {len(res.template_ids)}"
                               f"{note}: native {self._show_ids(res.native_ids, i)} vs template "
                               f"{self._show_ids(res.template_ids, i)}")

    def _show_ids(self, ids: list[int], i: int) -> str:
        from toolwire.tokenize import token_pieces

        window = ids[max(0, i - 2):i + 3]
        pieces = "".join(("⟪" + p.text + "⟫") if p.special else p.text for p in token_pieces(window, self.tokenizer))
        return f"{window} {_quote(pieces)}"

    def _round_trip(self, sc: Scenario, res: ScenarioResult) -> Check:
        from toolwire.models import call_arguments, normalize_messages

        thinking = bool(sc.options.get("thinking"))
        try:
            full = self.render_native(sc, add_generation_prompt=False)
            head = self.render_native(Scenario(sc.id, sc.messages[:-1], sc.tools, sc.options), add_generation_prompt=True)
        except ToolwireError as exc:
            return Check("skip", f"not renderable natively: {exc}")
        if not full.text.startswith(head.text):
            i = first_difference(head.text, full.text)
            return Check("skip", f"the history render does not extend the generation prompt (char {i})")
        raw = full.text[len(head.text):]
        thinking = head.opens_reasoning  # where the output starts (a family may open reasoning whatever the switch)
        stop = _trailing_stop(full)
        candidates = [raw[:len(raw) - stop]] if 0 < stop <= len(raw) else []
        candidates.append(raw)  # formats without an end-of-turn token (GLM) end on a marker of their own
        turn = normalize_messages([sc.messages[-1]])[0]
        want = (turn.text(), turn.reasoning_content or "",
                [(c.function.name, _wire_arguments(self.fmt, call_arguments(c, len(sc.messages) - 1, k)))
                 for k, c in enumerate(turn.tool_calls or [])])
        first_problem = None
        for output in candidates:
            problems, notes, got, wanted = self._read_back(output, sc.tools, thinking, want)
            got, recovered = got[:3], got[3]
            if not problems:
                res.read_back, res.wanted = got, wanted
                return Check("match", "; ".join([f"{len(want[2])} call" + ("" if len(want[2]) == 1 else "s")] + notes))
            first_problem = first_problem or (output, problems, got, wanted, recovered)
        output, problems, res.read_back, res.wanted, res.recovered = first_problem
        return Check("differ", f"output {_quote(output)} parses back differently: " + "; ".join(problems))

    def _read_back(self, output: str, tools: Any, thinking: bool,
                   want: tuple) -> tuple[list[str], list[str], tuple, tuple]:
        """Parse ``output``: (problems, notes, what came back, what was expected of it)."""
        content, reasoning, calls = want
        parsed = self.fmt.parse(output, tools, thinking=thinking)
        problems, notes = [], []
        if reasoning and reasoning not in output:
            reasoning = ""  # the format does not render this turn's reasoning: nothing to read back
            notes.append("reasoning not rendered")
            want = (content, "", calls)
        if parsed.content != content:
            problems.append(f"content {_quote(parsed.content)} != {_quote(content)}")
        if parsed.reasoning != reasoning:
            problems.append(f"reasoning {_quote(parsed.reasoning)} != {_quote(reasoning)}")
        got = [(c.name, c.arguments) for c in parsed.tool_calls]
        if got != calls:
            problems.append(f"tool calls {got!r} != {calls!r}")
        problems += [f"call {c.index} is {c.status}" for c in parsed.tool_calls if c.status in ("rejected", "truncated")]
        # a call read back only through a drift recovery: the template wrote something other than the format
        recovered = sorted({d.code for d in [*parsed.diagnostics, *(d for c in parsed.tool_calls for d in c.diagnostics)]
                            if d.severity != "info" and drift_class(d) is not None})
        problems += [f"read back only through the drift recovery {code}" for code in recovered]
        return problems, notes, (parsed.content, parsed.reasoning, got, tuple(recovered)), want



def _wire_arguments(fmt: Any, value: Any) -> Any:
    """The arguments the format's wire carries: formats whose reference leaves None-valued keys out
    (``omits_none_arguments``, MiniMax-M3) read back without them."""
    if not getattr(fmt, "omits_none_arguments", False):
        return value
    if isinstance(value, dict):
        return {k: _wire_arguments(fmt, v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_wire_arguments(fmt, v) for v in value]
    return value


def _trailing_stop(prompt: Any) -> int:
    """Length of the end-of-turn marker (plus the template whitespace after it) that closes a rendered turn."""
    n = 0
    segments = list(prompt.segments)
    while segments and segments[-1].kind == "template" and not segments[-1].text.strip():
        n += len(segments.pop().text)
    if segments and segments[-1].kind == "special":
        return n + len(segments[-1].text)
    return 0


def run_comparison(comparer: Comparer, scenarios: Iterable[Scenario], progress: Any = None) -> list[ScenarioResult]:
    """Compare every scenario; ``progress(i, total, scenario_id)`` is called after each one."""
    scenarios = list(scenarios)
    results = []
    for i, sc in enumerate(scenarios, 1):
        results.append(comparer.compare(sc))
        if progress is not None:
            progress(i, len(scenarios), sc.id)
    return results


# ---------------------------------------------------------------- the command

def configure_parser(p: argparse.ArgumentParser) -> None:
    """Add the ``toolwire fidelity`` arguments to ``p``."""
    p.add_argument("--format", help="the native format (see 'toolwire formats'); default: what 'toolwire detect' "
                                    "names for the template")
    p.add_argument("--template", required=True, help="the model's chat template (.jinja, tokenizer_config.json or "
                                                     "a model folder)")
    p.add_argument("--tokenizer", help="tokenizer folder (tokenizer.json[.gz], vocab.json+merges.txt, tiktoken "
                                       "tokenizer.model+special_tokens.json, o200k_base.tiktoken) or mistral:vN; "
                                       "also supplies bos/eos from its tokenizer_config.json")
    p.add_argument("--corpus", action="append", default=[], help="extra scenarios (JSON lines); repeatable")
    p.add_argument("--no-builtin", action="store_true", help="run only the --corpus scenarios")
    p.add_argument("--html", help="write an HTML report with side-by-side diffs to this file")
    p.add_argument("--json", dest="json_out", help="write the results as JSON to this file ('-': stdout, and the "
                                                   "summary goes to stderr)")
    p.add_argument("--date", help="today's date for templates and renderers that print it (YYYY-MM-DD)")
    p.add_argument("--arguments", choices=("auto", "object", "string"), default="auto",
                   help="how the template receives tool-call arguments (auto: as the golden vectors do)")
    p.add_argument("--bos-token", help="bos_token for the template (default: tokenizer config, else the format's)")
    p.add_argument("--eos-token", help="eos_token for the template (default: tokenizer config, else the format's)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a family option for every scenario, e.g. version=4.0 (Granite 4.0); repeatable. VALUE is "
                        "text, or true / false / null, a whole number, or JSON ({...}, [...], \"...\")")
    p.add_argument("--progress", action="store_true", help="show a progress bar even when stderr is not a TTY")
    p.add_argument("--details", type=int, default=10, help="how many first differences to print (default 10)")


def _template_tokens(args: argparse.Namespace, fmt: Any) -> dict[str, str]:
    from toolwire.templates.jinja import special_tokens_from_config

    tokens: dict[str, str] = {}
    for attr, key in (("bos_token", "bos"), ("eos_token", "eos")):
        if fmt.markers.get(key):
            tokens[attr] = fmt.markers[key]
    if args.tokenizer and not args.tokenizer.startswith("mistral:"):
        folder = Path(args.tokenizer)
        if (folder / "tokenizer_config.json").exists():
            try:
                tokens.update(special_tokens_from_config(folder))
            except (ValueError, OSError) as exc:
                raise BadInput("invalid_tokenizer", f"tokenizer {args.tokenizer}: {exc}") from None
    for attr in ("bos_token", "eos_token"):
        if getattr(args, attr):
            tokens[attr] = getattr(args, attr)
    return tokens


def _scenarios(args: argparse.Namespace) -> list[Scenario]:
    scenarios = [] if args.no_builtin else load_scenarios(builtin_corpus_path())
    for path in args.corpus:
        read_text(path, "corpus")  # names a missing or unreadable file
        try:
            scenarios += load_scenarios(path, source=Path(path).name)
        except ValueError as exc:
            raise BadInput("invalid_corpus", str(exc)) from None
    if not scenarios:
        raise BadInput("usage", "no scenarios to run (--no-builtin needs --corpus)")
    return scenarios


def parse_options(items: Iterable[str]) -> dict[str, Any]:
    """``--option KEY=VALUE`` items as a dict: VALUE is text, except ``true``/``false``/``null``, a whole number,
    or JSON starting with ``{``, ``[`` or ``"`` (``version=4.0`` stays the text ``"4.0"``)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise BadInput("usage", f"--option {item}: expected KEY=VALUE (e.g. version=4.0)")
        value: Any = text
        if text in ("true", "false", "null") or text.startswith(("{", "[", '"')) or re.fullmatch(r"-?\d+", text):
            try:
                value = json.loads(text)
            except ValueError:
                raise BadInput("usage", f"--option {item}: {text!r} is not valid JSON") from None
        out[key.strip()] = value
    return out


@dataclass
class _Run:
    """One candidate format compared with the template."""

    fmt: Any
    comparer: Comparer
    results: list[ScenarioResult]

    @property
    def matching(self) -> int:
        return sum(r.matches for r in self.results)

    def rank(self) -> tuple:
        bytes_ok = sum(r.bytes.status in ("match", "diverge") for r in self.results)
        trips = sum(r.round_trip.status in ("match", "diverge") for r in self.results)
        return (self.matching, bytes_ok, trips)


def _candidates(args: argparse.Namespace, source: str, template_name: str) -> tuple[list[str], dict, str | None]:
    """The formats to compare (``--format``, else every format whose markup the template shares), the family
    options of a fingerprinted revision, and how they were found (None with ``--format``)."""
    if args.format:
        get_format(args.format)
        return [args.format], {}, None
    from .detect import detect_source

    found = detect_source(source, template_name)
    if found.format is None:
        raise BadInput("format_not_detected", f"{found.describe()}; give --format")
    return list(found.candidates), dict(found.options), found.how


def _load(args: argparse.Namespace) -> Any:
    if not args.tokenizer:
        return None
    from toolwire.tokenize import load_tokenizer

    try:
        return load_tokenizer(args.tokenizer)
    except ImportError as exc:
        raise missing_extra(exc, "--tokenizer") from None
    except OSError as exc:
        raise BadInput("unreadable", f"tokenizer {args.tokenizer}: {exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
    """Run ``toolwire fidelity``; returns the exit code (0 when nothing differs, 1 on a difference). Bad input
    raises :class:`~toolwire.workbench.inputs.BadInput` (the command line prints it and exits 2).

    Without ``--format``, every format whose markup the template shares (``toolwire detect``'s candidates) is
    compared, and the report is the one with the most matching scenarios; stderr says which was chosen and why."""
    from . import fidelity_report as report_out
    from .detect import compile_template, load_template_source

    source, template_name = load_template_source(args.template)
    compile_template(source, args.template)  # an empty file or a syntax error, before anything else
    if args.date is not None and not re.match(r"^\d{4}-\d{2}-\d{2}$", args.date):
        raise BadInput("usage", f"--date {args.date}: expected YYYY-MM-DD")
    if args.html:
        try:
            import lxml  # noqa: F401 - checked before the run, not after it
        except ImportError as exc:
            raise missing_extra(exc, "--html") from None
    names, revision_options, how = _candidates(args, source, template_name)
    options = {**revision_options, **parse_options(args.option)}
    scenarios = _scenarios(args)
    tokenizer = _load(args)
    on_date = args.date or date.today().isoformat()
    runs: list[_Run] = []
    unfit: dict[str, list[str]] = {}
    for name in names:
        fmt = get_format(name)
        template = compile_template(source, args.template, special_tokens=_template_tokens(args, fmt), now=on_date)
        comparer = Comparer(fmt.name, template, tokenizer=tokenizer, on_date=on_date, arguments=args.arguments,
                            options=options)
        problems = comparer.tokenizer_problems(scenarios)
        if problems:
            unfit[name] = problems
            continue
        bar = report_out.ProgressBar(sys.stderr, force=args.progress)
        runs.append(_Run(fmt, comparer, run_comparison(comparer, scenarios, progress=bar.update)))
        bar.close()
    if not runs:
        raise BadInput("tokenizer_mismatch", f"tokenizer {args.tokenizer} does not fit "
                       + "; ".join(f"{name}: {'; '.join(p)}" for name, p in unfit.items())
                       + " (use the model's own tokenizer, or none)")
    best = max(runs, key=lambda r: r.rank())  # max keeps the first of equals: detect's order
    selection = None
    if how is not None:
        selection = _selection(best, runs, unfit, len(scenarios), how, options)
        print(f"toolwire fidelity: {template_name} {selection['why']}", file=sys.stderr)
    rep = Report(best.fmt.name, template_name, args.tokenizer, on_date, best.results, options, selection)
    text = report_out.summary(rep, details=args.details)
    (sys.stderr if args.json_out == "-" else sys.stdout).write(text)
    if args.html:
        report_out.write_html(rep, args.html, vocab=best.comparer.vocab, tokenizer=tokenizer)
    if args.json_out:
        write_output(args.json_out, json.dumps(report_out.as_json(rep), ensure_ascii=False, indent=1) + "\n")
    return 0 if rep.ok else 1


def _selection(best: _Run, runs: list[_Run], unfit: dict[str, list[str]], total: int, how: str,
               options: dict) -> dict:
    """Which candidate was chosen and why (one sentence for stderr; also in ``--json``)."""
    name = best.fmt.name + "".join(f" with {k}={v!r}" for k, v in options.items())
    if len(runs) == 1 and not unfit:
        why = f"detected as {name} ({how})"
    else:
        by = "its markup" if how == "markup" else "what it renders"
        others = ", ".join(f"{r.fmt.name} {r.matching}" for r in sorted(runs, key=lambda r: r.rank(), reverse=True)
                           if r is not best)
        why = (f"fits {len(runs) + len(unfit)} formats by {by}; compared each and chose {name}: "
               f"{best.matching} of {total} scenarios match" + (f" (the others: {others})" if others else ""))
        if unfit:
            why += f"; not compared, the tokenizer does not fit: {', '.join(unfit)}"
    return {"candidates": {r.fmt.name: r.matching for r in runs}, "chosen": best.fmt.name, "why": why}


__all__ = ["configure_parser", "run", "parse_options", "Comparer", "Scenario", "ScenarioResult", "Report", "Check",
           "load_scenarios", "builtin_corpus_path", "run_comparison", "describe_difference", "first_difference"]
