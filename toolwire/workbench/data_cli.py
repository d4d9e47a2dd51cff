"""The data-scale commands: ``parse --batch`` / ``render --batch`` (toolwire.batch), ``prefix``
(toolwire.training.prefix_report) and ``eval prompts`` / ``eval score`` (toolwire.eval).

Each ``configure_*`` adds its options to an argparse parser; each ``run_*`` runs with the parsed arguments
and returns the exit code. Errors are toolwire errors (the CLI prints them and exits 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from toolwire.registry import get_format

from .inputs import BadInput, limits_value, read_json, request_parts, require, tools_value


def configure_batch(parser: argparse.ArgumentParser, *, parse: bool) -> None:
    """``--batch IN --out OUT [--workers N] [--field F]`` on ``parse`` or ``render``."""
    parser.add_argument("--batch", metavar="IN", help="a JSON-lines or Parquet file of rows to " + (
        "parse" if parse else "render") + " (one row per output; '-' reads JSON lines from stdin)")
    parser.add_argument("--out", metavar="OUT", help="with --batch: where the rows go (.jsonl / .ndjson or .parquet; "
                                                     "'-' is stdout); written under a temporary name and renamed "
                                                     "when complete")
    parser.add_argument("--workers", type=int, default=1, help="with --batch: worker processes (default 1)")
    parser.add_argument("--field", default="model_output" if parse else "messages",
                        help="with --batch: the column holding the " + (
                            "model output (default model_output)" if parse else "messages (default messages)"))
    parser.add_argument("--progress", action="store_true", help="with --batch: draw the progress bar even when "
                                                                  "stderr is not a terminal")


def _batch_paths(args: argparse.Namespace) -> tuple[str, str]:
    if not args.out:
        raise BadInput("usage", "--batch needs --out (a .jsonl or .parquet file, or '-')")
    return args.batch, args.out


def run_parse_batch(args: argparse.Namespace) -> int:
    from toolwire.batch import BatchParser, run_file

    source, out = _batch_paths(args)
    tools = tools_value(read_json(args.tools, "tools"), args.tools) if args.tools else None
    parser = BatchParser(args.format, tools=tools, field=args.field, thinking=args.thinking, limits=limits_value(args))
    summary = run_file(parser, source, out, workers=args.workers, progress=args.progress or None)
    _print_summary("parse", summary)
    return 0


def _print_summary(command: str, summary: Any) -> None:
    print(f"toolwire {command}: {summary.text()}", file=sys.stderr)
    for note in summary.notes:
        print(f"toolwire {command}: note: {note}", file=sys.stderr)


def run_render_batch(args: argparse.Namespace, options: dict) -> int:
    from toolwire.batch import BatchRenderer, run_file

    source, out = _batch_paths(args)
    renderer = BatchRenderer(args.format, messages_field=args.field, tokenizer=args.tokenizer, options=options)
    summary = run_file(renderer, source, out, workers=args.workers, progress=args.progress or None)
    _print_summary("render", summary)
    return 0


# ---------------------------------------------------------------- prefix

def configure_prefix(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", required=True, help="the toolwire format name (see 'toolwire formats')")
    parser.add_argument("first", help="JSON file: the first request ({messages, tools, options})")
    parser.add_argument("second", help="JSON file: the next request")
    parser.add_argument("--tokenizer", help="also compare token ids (a tokenizer folder or mistral:vN)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _request(path: str) -> dict:
    messages, tools, options = request_parts(read_json(path, "request"), path)
    return {"messages": messages, "tools": tools, "options": options}


def run_prefix(args: argparse.Namespace, load_tokenizer: Any) -> int:
    """Exit 0 when the second prompt extends the first, 1 when it does not (like a check)."""
    from dataclasses import asdict

    from toolwire.training import prefix_report

    tok = load_tokenizer(args.tokenizer) if args.tokenizer else None
    report = prefix_report(get_format(args.format), _request(args.first), _request(args.second), tok)
    if args.json:
        print(json.dumps(asdict(report), ensure_ascii=False, indent=2))
    elif report.extends:
        print(f"extends: the second prompt starts with the first ({'ids' if tok else 'text'} compared)")
    else:
        print(f"diverges at char {report.char} (message {report.message_index} of the second request)")
        print(f"  why: {report.why}")
        print(f"  first : {report.first_context!r}")
        print(f"  second: {report.second_context!r}")
    return 0 if report.extends else 1


# ---------------------------------------------------------------- eval

def configure_eval(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="eval_command", required=True, metavar="STEP",
                                help="prompts: render the suite; score: score the raw outputs")
    for name, text in (("prompts", "render each suite item as the family's exact prompt (JSON lines)"),
                       ("score", "parse and score raw model outputs against the suite")):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("--format", required=True, help="the toolwire format name (see 'toolwire formats')")
        p.add_argument("--suite", required=True, help="'bfcl' (BFCL v4, from the bfcl-eval package), "
                                                      "'return_path' (histories ending in a tool result) or a "
                                                      "JSON-lines suite file")
        p.add_argument("--categories", help="comma-separated categories (default: all)")
        p.add_argument("--limit", type=int, help="at most this many items per category")
        p.add_argument("--thinking", action=argparse.BooleanOptionalAction,
                       help="render with thinking mode on or off (default: the template's own)")
        if name == "prompts":
            p.add_argument("--out", required=True, help="where the prompts go (JSON lines; '-' is stdout)")
            p.add_argument("--tokenizer", help="also write token ids (a tokenizer folder or mistral:vN)")
        else:
            p.add_argument("--outputs", required=True, help="JSON lines of {id, output}: the raw model outputs")
            p.add_argument("--html", help="also write an HTML report with plots")
            p.add_argument("--json", help="also write the per-item scores and metrics as JSON")
            p.add_argument("--progress", action="store_true", help="draw the progress bar even off a terminal")


def _items(args: argparse.Namespace):
    from toolwire.eval import load_suite

    categories = [c for c in (args.categories or "").split(",") if c] or None
    return load_suite(args.suite, categories=categories, limit=args.limit)


def run_eval(args: argparse.Namespace, load_tokenizer: Any) -> int:
    from toolwire import eval as tw_eval
    from toolwire.eval.report import html_report, text_table

    fmt = get_format(args.format)
    if getattr(args, "html", None):
        require("matplotlib", "--html")  # before scoring, not after it
    items = _items(args)
    options = {} if args.thinking is None else {"thinking": args.thinking}
    if args.eval_command == "prompts":
        tok = load_tokenizer(args.tokenizer) if args.tokenizer else None
        stream = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
        try:
            count = 0
            for record in tw_eval.prompts(fmt, items, tokenizer=tok, **options):
                stream.write(json.dumps(record, ensure_ascii=False) + "\n")
                count += 1
        finally:
            if stream is not sys.stdout:
                stream.close()
        print(f"toolwire eval: {count} prompts written", file=sys.stderr)
        return 0
    outputs = _outputs(args.outputs)
    evaluation = tw_eval.score(fmt, items, outputs, progress=args.progress or None, **options)
    print(text_table(evaluation))
    if args.html:
        Path(args.html).write_text(html_report(evaluation), encoding="utf-8")
    if args.json:
        from dataclasses import asdict

        Path(args.json).write_text(json.dumps({
            "format": evaluation.format, "overall": asdict(evaluation.overall),
            "by_category": {k: asdict(v) for k, v in evaluation.by_category.items()},
            "items": [asdict(s) for s in evaluation.scores], "unscored": evaluation.unscored}, indent=2),
            encoding="utf-8")
    return 0


def _outputs(path: str) -> dict[str, str]:
    if not Path(path).is_file():
        raise BadInput("not_found", f"no such file: {path} (--outputs)")
    outputs = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BadInput("invalid_json", f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict) or not isinstance(row.get("output"), str) or "id" not in row:
                raise BadInput("invalid_request", f"{path}:{number}: each line is {{\"id\", \"output\": text}}")
            outputs[str(row["id"])] = row["output"]
    return outputs
