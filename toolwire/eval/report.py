"""Evaluation reports: a terminal table, and an HTML page with plots (matplotlib, PNG inside the page).

The HTML holds per-category accuracy bars, the call / no-call confusion table, the attribution of every
miss, and the diagnostic codes of malformed outputs; it is one self-contained file (no scripts, no links).
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

from .run import Evaluation

_COLUMNS = ("items", "accuracy", "call_precision", "call_recall", "name_accuracy", "argument_accuracy",
            "call_argument_accuracy", "false_call_rate", "miss_rate", "forbidden_call_rate")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{100 * value:.1f}%"
    return str(value)


def rows(evaluation: Evaluation) -> list[list[str]]:
    """The table's rows: one per category, then ``overall``."""
    out = []
    for name, metrics in sorted(evaluation.by_category.items()) + [("overall", evaluation.overall)]:
        out.append([name] + [_cell(getattr(metrics, c)) for c in _COLUMNS]
                   + [", ".join(f"{k} {v}" for k, v in sorted(metrics.attributions.items())) or "-"])
    return out


def text_table(evaluation: Evaluation) -> str:
    """The metrics as a plain-text table, plus the unscored count and the malformed-output codes."""
    header = ["category", *_COLUMNS, "misses by cause"]
    body = rows(evaluation)
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header] + body]
    codes = evaluation.overall.codes
    lines.append("")
    lines.append(f"{evaluation.overall.items} items scored, {len(evaluation.unscored)} unscored; "
                 f"{evaluation.items_per_second:,.0f} items/s")
    if codes:
        lines.append("malformed outputs: " + ", ".join(f"{k} {v}" for k, v in sorted(codes.items())))
    return "\n".join(lines)


def confusion(evaluation: Evaluation) -> dict[str, int]:
    """Call / no-call confusion over the items that say whether a call is expected."""
    out = {"call expected, called": 0, "call expected, no call": 0, "no call expected, called": 0,
           "no call expected, no call": 0}
    for s in evaluation.scores:
        if s.expects_call is None:
            continue
        key = ("call expected" if s.expects_call else "no call expected") + (", called" if s.called else ", no call")
        out[key] += 1
    return out


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _plots(evaluation: Evaluation) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots = []
    names = sorted(evaluation.by_category)
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.bar(names, [100 * evaluation.by_category[n].accuracy for n in names], color="#3b6ea5")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{evaluation.format}: accuracy per category")
    ax.tick_params(axis="x", rotation=30)
    plots.append(("Accuracy per category", _png(fig)))
    plt.close(fig)
    causes = evaluation.overall.attributions
    if causes:
        fig, ax = plt.subplots(figsize=(5, 2.5))
        ax.barh(list(causes), list(causes.values()), color="#a53b3b")
        ax.set_xlabel("misses")
        ax.set_title("what caused each miss")
        plots.append(("Misses by cause", _png(fig)))
        plt.close(fig)
    codes = evaluation.overall.codes
    if codes:
        fig, ax = plt.subplots(figsize=(5, 0.4 * len(codes) + 1))
        ax.barh(list(codes), list(codes.values()), color="#7a5aa5")
        ax.set_xlabel("outputs")
        ax.set_title("diagnostic codes of malformed outputs")
        plots.append(("Malformed outputs", _png(fig)))
        plt.close(fig)
    return plots


def html_report(evaluation: Evaluation) -> str:
    """A self-contained HTML page: the metrics table, the confusion table and the plots."""
    esc = html.escape
    header = ["category", *_COLUMNS, "misses by cause"]
    table = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows(evaluation))
    conf = confusion(evaluation)
    conf_rows = (f"<tr><th></th><th>called</th><th>no call</th></tr>"
                 f"<tr><th>call expected</th><td>{conf['call expected, called']}</td>"
                 f"<td>{conf['call expected, no call']}</td></tr>"
                 f"<tr><th>no call expected</th><td>{conf['no call expected, called']}</td>"
                 f"<td>{conf['no call expected, no call']}</td></tr>")
    figures = "".join(f'<figure><img alt="{esc(title)}" src="{src}"><figcaption>{esc(title)}</figcaption></figure>'
                      for title, src in _plots(evaluation))
    misses = "".join(f"<tr><td>{esc(s.id)}</td><td>{esc(s.category)}</td><td>{esc(s.attribution or '')}</td>"
                     f"<td>{esc(s.miss or '')}</td><td>{esc(', '.join(s.codes))}</td></tr>"
                     for s in evaluation.scores if not s.correct)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>toolwire eval: "
            f"{esc(evaluation.format)}</title><style>body{{font-family:sans-serif;margin:2em}}"
            f"table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:3px 8px;"
            f"text-align:right}}td:first-child,th:first-child{{text-align:left}}figure{{display:inline-block;"
            f"margin:1em}}</style></head><body><h1>toolwire eval: {esc(evaluation.format)}</h1>"
            f"<p>{evaluation.overall.items} items scored, {len(evaluation.unscored)} unscored.</p>"
            f"<h2>Metrics</h2><table><tr>{table}</tr>{body}</table>"
            f"<h2>Call / no call</h2><table>{conf_rows}</table><h2>Plots</h2>{figures}"
            f"<h2>Every miss</h2><table><tr><th>item</th><th>category</th><th>cause</th><th>miss</th>"
            f"<th>codes</th></tr>{misses}</table></body></html>\n")
