"""Output of ``toolwire fidelity``: the terminal summary, the progress bar, the HTML and JSON reports."""

from __future__ import annotations

import difflib
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


def summary(rep: Report, *, details: int = 10) -> str:
    """The terminal summary: one row per scenario, totals, then the first differences in context."""
    width = max([len(r.scenario.id) for r in rep.results] + [8])
    lines = [f"toolwire fidelity: {rep.format} vs {rep.template}"
             f" ({len(rep.results)} scenarios, tokenizer: {rep.tokenizer or 'none'}, date {rep.date})", "",
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
            lines.append(f"... and {len(bad) - details} more scenario(s); see --html or --json")
    skipped = [r for r in rep.results if r.bytes.status == "skip"]
    if skipped:
        lines += ["", "not applicable: " + ", ".join(r.scenario.id for r in skipped)]
    divergences = rep.divergences()
    if divergences:
        lines += ["", "documented divergences (docs/fidelity.md):"]
        for name, ids in divergences.items():
            lines.append(f"- {name}: {', '.join(ids)}")
    if not rep.ok:
        verdict = f"DIFFERENT in {len(bad)} scenario(s): {', '.join(rep.differing())}"
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
        "divergences": rep.divergences(),
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
td.match{background:#e6f4ea} td.differ{background:#fce8e6;font-weight:bold} td.skip{color:#888}
table.side{width:100%;table-layout:fixed;border-collapse:collapse} table.side td{vertical-align:top;width:50%;
border:1px solid #ddd;padding:4px} pre{white-space:pre-wrap;word-break:break-all;margin:0;font-size:12px}
.sp{background:#dbe8ff;color:#0b3d91;font-weight:bold;border-radius:2px} .ct{color:#000} .tp{color:#555}
.d{background:#ffd54f;outline:1px solid #e0a800} .detail{white-space:pre-wrap;font-family:monospace;font-size:12px}
section{margin-top:1.5em;border-top:2px solid #eee;padding-top:.5em}
"""


def _classes(text: str, specials: list[tuple[int, int]], diffs: list[tuple[int, int]]) -> list[tuple[str, str]]:
    """Split ``text`` into (css classes, piece) runs from special-token and difference spans."""
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


def _diff_spans(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    if a == b:
        return [], []
    if len(a) + len(b) > 200_000:
        i = len(os.path.commonprefix([a, b]))  # the first differing character
        return [(i, len(a))], [(i, len(b))]
    sa, sb = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            sa.append((i1, max(i2, i1 + 1)))
            sb.append((j1, max(j2, j1 + 1)))
    return sa, sb


def _marker_spans(text: str, markers: list[str], vocab: Any) -> list[tuple[int, int]]:
    if vocab is not None:
        return [(m.start(), m.end()) for m in vocab.find_controls(text)]
    spans, pos = [], 0
    for marker in sorted(set(markers), key=len, reverse=True):
        pos = text.find(marker)
        while pos >= 0:
            spans.append((pos, pos + len(marker)))
            pos = text.find(marker, pos + len(marker))
    return spans


def _native_spans(result: ScenarioResult) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for seg in result.native.segments:
        if seg.kind == "special":
            spans.append((pos, pos + len(seg.text)))
        pos += len(seg.text)
    return spans


def _pre(E: Any, runs: list[tuple[str, str]]) -> Any:
    pre = E.PRE()
    for cls, piece in runs:
        if cls:
            span = E.SPAN(piece)
            span.set("class", cls)
            pre.append(span)
        elif len(pre):
            pre[-1].tail = (pre[-1].tail or "") + piece
        else:
            pre.text = (pre.text or "") + piece
    return pre


def write_html(rep: Report, path: str | Path, *, vocab: Any = None, tokenizer: Any = None) -> None:
    """Write a self-contained HTML report: summary table, then each scenario's two prompts side by side with
    control tokens highlighted (blue) and differences marked (yellow)."""
    from lxml import etree
    from lxml.html import builder as E

    markers = sorted({m for r in rep.results if r.native is not None for m in r.native.special_markers()})
    rows = [E.TR(E.TH("scenario"), E.TH("bytes"), E.TH("tokens"), E.TH("round trip"), E.TH("description"))]
    for r in rep.results:
        cells = [E.TD(E.A(r.scenario.id, href=f"#{r.scenario.id}"))]
        for c in r.checks:
            td = E.TD(_MARK[c.status])
            td.set("class", c.status)
            cells.append(td)
        cells.append(E.TD(r.scenario.description))
        rows.append(E.TR(*cells))
    verdict = "all scenarios match" if rep.ok else f"{len(rep.differing())} scenario(s) differ"
    body = [E.H1(f"toolwire fidelity: {rep.format} vs {rep.template}"),
            E.P(f"{len(rep.results)} scenarios; tokenizer: {rep.tokenizer or 'none'}; date {rep.date}; {verdict}."),
            E.TABLE(*rows, E.CLASS("sum"))]
    for r in rep.results:
        section = E.SECTION(E.H2(r.scenario.id), E.P(r.scenario.description or ""))
        section.set("id", r.scenario.id)
        for name, check in zip(("bytes", "tokens", "round trip"), r.checks):
            line = E.DIV(f"{name}: {check.status}" + (f" — {check.detail}" if check.detail else ""))
            line.set("class", "detail")
            section.append(line)
        native = r.native.text if r.native is not None else ""
        templ = r.template_text if r.template_text is not None else ""
        da, db = _diff_spans(native, templ)
        left = (_pre(E, _classes(native, _native_spans(r), da)) if r.native is not None
                else E.PRE(f"(refused) {r.native_error or 'not applicable'}"))
        right = (_pre(E, _classes(templ, _marker_spans(templ, markers, vocab), db)) if r.template_text is not None
                 else E.PRE(f"(refused) {r.template_error}"))
        section.append(E.TABLE(E.TR(E.TH("native renderer"), E.TH("chat template")), E.TR(E.TD(left), E.TD(right)),
                               E.CLASS("side")))
        body.append(section)
    doc = E.HTML(E.HEAD(E.META(charset="utf-8"), E.TITLE(f"fidelity {rep.format}"), E.STYLE(_CSS)), E.BODY(*body))
    Path(path).write_bytes(etree.tostring(doc, method="html", encoding="utf-8", doctype="<!DOCTYPE html>"))


__all__ = ["ProgressBar", "summary", "as_json", "write_html"]
