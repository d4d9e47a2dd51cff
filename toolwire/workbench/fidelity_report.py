"""Output of ``toolwire fidelity``: the terminal summary, the progress bar, the HTML and JSON reports."""

from __future__ import annotations

import difflib
import json
import os
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # only for annotations: fidelity imports this module, not the other way round
    from .fidelity import Report, ScenarioResult

_MARK = {"match": "ok", "differ": "DIFF", "diverge": "doc", "skip": "-"}
"""Terminal marks: ``doc`` is a documented divergence (docs/fidelity.md), not a difference."""


# ---------------------------------------------------------------- terminal

class ProgressBar:
    """A one-line progress bar on ``stream``, drawn only when it is a TTY or ``force`` is set."""

    def __init__(self, stream: IO[str], *, force: bool = False, width: int = 30):
        self.stream = stream
        self.enabled = force or bool(getattr(stream, "isatty", lambda: False)())
        self.width = width
        self._last = 0.0
        self._drawn = False

    def update(self, done: int, total: int, label: str = "") -> None:
        """Redraw (at most every 50 ms, and always for the last item)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.05:
            return
        self._last = now
        filled = self.width * done // max(total, 1)
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} {label[:40]:<40}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()


def _tally(rep: Report, name: str, word: str) -> str:
    c = rep.counts(name)
    checked = c["match"] + c["differ"] + c["diverge"]
    notes = ([f"{c['diverge']} documented divergence"] if c["diverge"] else []) + \
        ([f"{c['skip']} n/a"] if c["skip"] else [])
    return f"{name.replace('_', ' ')} {c['match']}/{checked} {word}" + (f" ({', '.join(notes)})" if notes else "")


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def _count(n: int, word: str) -> str:
    """``1 scenario``, ``2 scenarios``."""
    return f"{n} {_plural(n, word)}"


def summary(rep: Report, *, details: int = 10) -> str:
    """The terminal summary: one row per scenario, totals, then the first differences in context."""
    width = max([len(r.scenario.id) for r in rep.results] + [8])
    lines = [f"toolwire fidelity: {rep.format} vs {rep.template}"
             f" ({_count(len(rep.results), 'scenario')}, tokenizer: {rep.tokenizer or 'none'}, date {rep.date})", "",
             f"  {'scenario':<{width}}  bytes  tokens  round trip"]
    for r in rep.results:
        b, t, rt = (_MARK[c.status] for c in r.checks)
        if r.bytes.status == "match" and r.native is None:
            b = "refused"
        lines.append(f"  {r.scenario.id:<{width}}  {b:<5}  {t:<6}  {rt}")
    lines += ["", "  " + "   ".join((_tally(rep, "bytes", "equal"), _tally(rep, "tokens", "equal"),
                                       _tally(rep, "round_trip", "ok")))]
    bad = [r for r in rep.results if not r.matches]
    if bad:
        lines += ["", "first differences:"]
        for r in bad[:details]:
            for name, check in zip(("bytes", "tokens", "round trip"), r.checks):
                if check.status == "differ":
                    lines.append(f"- {r.scenario.id} [{name}]: " + check.detail.replace("\n", "\n    "))
        if len(bad) > details:
            more = len(bad) - details
            lines.append(f"... and {more} more {_plural(more, 'scenario')}; see --html or --json")
    skipped = [r for r in rep.results if r.bytes.status == "skip"]
    if skipped:
        lines += ["", "not applicable: " + ", ".join(r.scenario.id for r in skipped)]
    divergences = rep.divergences()
    if divergences:
        lines += ["", "documented divergences (docs/fidelity.md):"]
        for name, ids in divergences.items():
            lines.append(f"- {name}: {', '.join(ids)}")
    if not rep.ok:
        verdict = f"DIFFERENT in {_count(len(bad), 'scenario')}: {', '.join(rep.differing())}"
    elif divergences:
        verdict = f"MATCH WITH DOCUMENTED DIVERGENCES: {', '.join(divergences)}"
    else:
        verdict = "ALL MATCH"
    lines += ["", f"result: {verdict}", ""]
    return "\n".join(lines)


def as_json(rep: Report) -> dict:
    """The results as plain JSON data."""
    return {
        "format": rep.format, "template": rep.template, "tokenizer": rep.tokenizer, "date": rep.date, "ok": rep.ok,
        "options": rep.options, "selection": rep.selection, "divergences": rep.divergences(),
        "scenarios": [{
            "id": r.scenario.id, "source": r.scenario.source, "matches": r.matches, "divergences": r.divergences,
            "bytes": vars(r.bytes), "tokens": vars(r.tokens), "round_trip": vars(r.round_trip),
            "native": r.native.text if r.native is not None else None, "native_error": r.native_error,
            "template": r.template_text, "template_error": r.template_error,
        } for r in rep.results],
    }


# ---------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table.sum{border-collapse:collapse} table.sum td,table.sum th{border:1px solid #ccc;padding:2px 8px;text-align:left}
td.match{background:#e6f4ea} td.differ{background:#fce8e6;font-weight:bold} td.diverge{background:#fff4d6}
td.skip{color:#888}
table.side{width:100%;table-layout:fixed;border-collapse:collapse} table.side td{vertical-align:top;width:50%;
border:1px solid #ddd;padding:0 4px} table.side tr.chg td{background:#fffbe6}
pre{white-space:pre-wrap;word-break:break-all;margin:0;font-size:12px;font-family:ui-monospace,monospace}
.sp{background:#dbe8ff;color:#0b3d91;font-weight:bold;border-radius:2px}
.d{background:#ffd54f;outline:1px solid #e0a800} .ws{color:#b07d00}
.detail{white-space:pre-wrap;font-family:monospace;font-size:12px}
section{margin-top:1.5em;border-top:2px solid #eee;padding-top:.5em}
table.tok{border-collapse:collapse;font-size:12px;margin:.5em 0} table.tok td,table.tok th{border:1px solid #ccc;
padding:1px 6px;font-family:monospace} table.tok tr.first td{background:#ffd54f}
.legend span{margin-right:1.5em} .filter{margin:1em 0}
#only-differing:checked ~ main section.same, #only-differing:checked ~ table.sum tr.same{display:none}
"""

_GLYPHS = {" ": "·", "\t": "→", "\n": "↵\n", "\r": "␍"}
"""Whitespace shown visibly inside a marked difference."""


def _runs(text: str, specials: list[tuple[int, int]], diffs: list[tuple[int, int]]) -> list[tuple[str, str]]:
    """Split ``text`` into (css classes, piece) runs from control-token and difference spans."""
    flags = [0] * len(text)
    for bit, spans in ((1, specials), (2, diffs)):
        for a, b in spans:
            for k in range(max(a, 0), min(b, len(text))):
                flags[k] |= bit
    out: list[tuple[str, str]] = []
    start = 0
    for k in range(1, len(text) + 1):
        if k == len(text) or flags[k] != flags[start]:
            cls = " ".join(c for bit, c in ((1, "sp"), (2, "d")) if flags[start] & bit)
            out.append((cls, text[start:k]))
            start = k
    return out


def _opcodes(a: str, b: str) -> list[tuple[str, int, int, int, int]]:
    """difflib opcodes of the two prompts (one replace block past the common prefix for huge texts)."""
    if a == b:
        return [("equal", 0, len(a), 0, len(b))] if a else []
    if len(a) + len(b) > 200_000:
        i = len(os.path.commonprefix([a, b]))
        return [("equal", 0, i, 0, i), ("replace", i, len(a), i, len(b))]
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _marker_spans(text: str, markers: list[str], vocab: Any) -> list[tuple[int, int]]:
    """Where ``text`` spells a control token: by the tokenizer's control tokens, else by the format's
    markers. The same function shades both sides, so the two columns are shaded alike."""
    if vocab is not None:
        return [(m.start(), m.end()) for m in vocab.find_controls(text)]
    spans: list[tuple[int, int]] = []
    taken = [False] * len(text)
    for marker in sorted(set(markers), key=len, reverse=True):
        pos = text.find(marker)
        while pos >= 0:
            if not any(taken[pos:pos + len(marker)]):
                spans.append((pos, pos + len(marker)))
                for k in range(pos, pos + len(marker)):
                    taken[k] = True
            pos = text.find(marker, pos + len(marker))
    return spans


def _shift(spans: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    return [(max(a, start) - start, min(b, end) - start) for a, b in spans if a < end and b > start]


def _pre(E: Any, runs: list[tuple[str, str]]) -> Any:
    """A ``<pre>`` of runs; whitespace inside a difference is drawn with visible glyphs."""
    pre = E.PRE()

    def add(cls: str, piece: str) -> None:
        if cls:
            span = E.SPAN(piece)
            span.set("class", cls)
            pre.append(span)
        elif len(pre):
            pre[-1].tail = (pre[-1].tail or "") + piece
        else:
            pre.text = (pre.text or "") + piece

    for cls, piece in runs:
        if "d" in cls.split():
            for k, ch in enumerate(piece):
                add(cls + (" ws" if ch in _GLYPHS else ""), _GLYPHS.get(ch, ch))
        else:
            add(cls, piece)
    return pre


def _side_by_side(E: Any, native: str, templ: str, n_spans: list, t_spans: list) -> Any:
    """The two prompts in one table, a row per diff block, so the text after a difference starts level."""
    rows = [E.TR(E.TH("native renderer"), E.TH("chat template"))]
    for tag, i1, i2, j1, j2 in _opcodes(native, templ):
        diff = tag != "equal"
        left = _pre(E, _runs(native[i1:i2], _shift(n_spans, i1, i2), [(0, i2 - i1)] if diff else []))
        right = _pre(E, _runs(templ[j1:j2], _shift(t_spans, j1, j2), [(0, j2 - j1)] if diff else []))
        row = E.TR(E.TD(left), E.TD(right))
        if diff:
            row.set("class", "chg")
        rows.append(row)
    table = E.TABLE(*rows)
    table.set("class", "side")
    return table


def _token_table(E: Any, r: ScenarioResult, tokenizer: Any, vocab: Any, context: int = 4) -> Any | None:
    """Ids, pieces and control-or-not of both sides around the first token mismatch."""
    if tokenizer is None or r.tokens.status != "differ" or r.native_ids is None or r.template_ids is None:
        return None
    from toolwire.tokenize import token_pieces

    a, b = r.native_ids, r.template_ids
    first = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo, hi = max(0, first - context), first + context + 1

    def cells(ids: list[int], k: int) -> list[Any]:
        if k >= len(ids):
            return [E.TD("(end)"), E.TD(""), E.TD("")]
        tid = ids[k]
        piece = token_pieces([tid], tokenizer)
        text = "".join(p.text for p in piece)
        control = tid in vocab.control_ids if vocab is not None else any(p.special for p in piece)
        return [E.TD(str(tid)), E.TD(json.dumps(text, ensure_ascii=False)), E.TD("control" if control else "text")]

    rows = [E.TR(E.TH("#"), E.TH("native id"), E.TH("piece"), E.TH("kind"), E.TH("template id"), E.TH("piece"),
                 E.TH("kind"))]
    for k in range(lo, min(hi, max(len(a), len(b)))):
        row = E.TR(E.TD(str(k)), *cells(a, k), *cells(b, k))
        if k == first:
            row.set("class", "first")
        rows.append(row)
    table = E.TABLE(*rows)
    table.set("class", "tok")
    return E.DIV(E.P(f"first token mismatch at token {first}:"), table)


def _legend(E: Any) -> Any:
    def item(cls: str, sample: str, words: str) -> Any:
        span = E.SPAN(sample)
        span.set("class", cls)
        return E.SPAN(span, " " + words)

    legend = E.P(item("sp", "<|im_start|>", "control-token text (shaded alike on both sides)"),
                 item("d", "abc", "a difference (rows after it start level)"),
                 item("d ws", "·→↵", "space, tab, newline inside a difference"),
                 E.SPAN("statuses: ok equal, DIFF different, doc documented divergence (docs/fidelity.md), - n/a"))
    legend.set("class", "legend")
    return legend


def write_html(rep: Report, path: str | Path, *, vocab: Any = None, tokenizer: Any = None) -> None:
    """Write a self-contained HTML report: a filter, the summary table, then each scenario's two prompts side by
    side (aligned by diff blocks, control tokens shaded, differences marked with visible whitespace), and a
    token table around the first token mismatch. ``path`` ``-`` writes to stdout."""
    from lxml import etree
    from lxml.html import builder as E

    from .inputs import write_output

    markers = sorted({m for r in rep.results if r.native is not None for m in r.native.special_markers()})
    rows = [E.TR(E.TH("scenario"), E.TH("bytes"), E.TH("tokens"), E.TH("round trip"), E.TH("description"))]
    for r in rep.results:
        cells = [E.TD(E.A(r.scenario.id, href=f"#{r.scenario.id}"))]
        for c in r.checks:
            td = E.TD(_MARK[c.status])
            td.set("class", c.status)
            cells.append(td)
        cells.append(E.TD(r.scenario.description))
        row = E.TR(*cells)
        row.set("class", "same" if r.matches and not r.divergences else "differs")
        rows.append(row)
    bad = len(rep.differing())
    verdict = "all scenarios match" if rep.ok else f"{_count(bad, 'scenario')} {'differs' if bad == 1 else 'differ'}"
    if rep.divergences():
        verdict += "; documented divergences: " + ", ".join(rep.divergences())
    toggle = E.INPUT(type="checkbox", id="only-differing")
    if not rep.ok or rep.divergences():
        toggle.set("checked", "checked")
    label = E.LABEL(" show only the scenarios that differ or diverge")
    label.set("for", "only-differing")
    filter_line = E.P(label)
    filter_line.set("class", "filter")
    summary_table = E.TABLE(*rows)
    summary_table.set("class", "sum")
    main = E.E.main()
    for r in rep.results:
        section = E.SECTION(E.H2(r.scenario.id), E.P(r.scenario.description or ""))
        section.set("id", r.scenario.id)
        section.set("class", "same" if r.matches and not r.divergences else "differs")
        for name, check in zip(("bytes", "tokens", "round trip"), r.checks):
            line = E.DIV(f"{name}: {check.status}" + (f" — {check.detail}" if check.detail else ""))
            line.set("class", "detail")
            section.append(line)
        tokens = _token_table(E, r, tokenizer, vocab)
        if tokens is not None:
            section.append(tokens)
        if r.native is not None and r.template_text is not None:
            section.append(_side_by_side(E, r.native.text, r.template_text,
                                         _marker_spans(r.native.text, markers, vocab),
                                         _marker_spans(r.template_text, markers, vocab)))
        else:
            left = (_pre(E, _runs(r.native.text, _marker_spans(r.native.text, markers, vocab), []))
                    if r.native is not None else E.PRE(f"(refused) {r.native_error or 'not applicable'}"))
            right = (_pre(E, _runs(r.template_text, _marker_spans(r.template_text, markers, vocab), []))
                     if r.template_text is not None else E.PRE(f"(refused) {r.template_error}"))
            side = E.TABLE(E.TR(E.TH("native renderer"), E.TH("chat template")), E.TR(E.TD(left), E.TD(right)))
            side.set("class", "side")
            section.append(side)
        main.append(section)
    body = E.BODY(E.H1(f"toolwire fidelity: {rep.format} vs {rep.template}"),
                  E.P(f"{_count(len(rep.results), 'scenario')}; tokenizer: {rep.tokenizer or 'none'}; date {rep.date}; "
                      f"{verdict}."),
                  _legend(E), toggle, filter_line, summary_table, main)
    doc = E.HTML(E.HEAD(E.META(charset="utf-8"), E.TITLE(f"fidelity {rep.format}"), E.STYLE(_CSS)), body)
    write_output(str(path), etree.tostring(doc, method="html", encoding="utf-8", doctype="<!DOCTYPE html>"))


__all__ = ["ProgressBar", "summary", "as_json", "write_html"]
