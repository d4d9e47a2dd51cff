"""The ``toolwire`` command: formats, render, parse, plan, fidelity and demo."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from toolwire.errors import ToolwireError
from toolwire.registry import formats, get_format


def _read_json(path: str) -> Any:
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SystemExit(f"toolwire: {path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None


def _read_text(path: str) -> str:
    return sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")


def _request(data: Any) -> tuple[list, list | None]:
    """A request file is either ``{"messages": [...], "tools": [...]}`` or a bare message list."""
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict) and "messages" in data:
        return data["messages"], data.get("tools")
    raise SystemExit("toolwire: a request file holds {\"messages\": [...], \"tools\": [...]} or a list of messages")


def _cmd_formats(args: argparse.Namespace) -> int:
    for name in formats():
        ref = get_format(name).reference
        print(f"{name:22} {ref}" if ref else name)
    return 0


def _render_options(args: argparse.Namespace, data: Any) -> dict:
    opts: dict[str, Any] = {}
    if isinstance(data, dict):
        opts.update(data.get("options") or {})
    if args.thinking:
        opts["thinking"] = True
    if args.reasoning_effort is not None:
        effort = args.reasoning_effort
        opts["reasoning_effort"] = int(effort) if effort.isdigit() else effort
    if args.current_date:
        opts["current_date"] = args.current_date
    if args.no_generation_prompt:
        opts["add_generation_prompt"] = False
    return opts


def _cmd_render(args: argparse.Namespace) -> int:
    data = _read_json(args.request)
    messages, tools = _request(data)
    prompt = get_format(args.format).render(messages, tools, **_render_options(args, data))
    if args.segments:
        for seg in prompt.segments:
            print(json.dumps({"kind": seg.kind, "message_index": seg.message_index, "text": seg.text},
                             ensure_ascii=False))
    else:
        sys.stdout.write(prompt.text)
        if not prompt.text.endswith("\n"):
            sys.stdout.write("\n")
    return 0


def _cmd_parse(args: argparse.Namespace) -> int:
    tools = None
    if args.tools:
        tools = _read_json(args.tools)
        if isinstance(tools, dict):
            tools = tools.get("tools")
    out = get_format(args.format).parse(_read_text(args.output), tools, thinking=args.thinking)
    print(json.dumps(out.model_dump(), ensure_ascii=False, indent=2))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(delay=args.delay, format_name=args.format)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="toolwire", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    sub.add_parser("formats", help="list the format names and their references").set_defaults(func=_cmd_formats)

    r = sub.add_parser("render", help="render a request (JSON file) into a prompt")
    r.add_argument("--format", required=True)
    r.add_argument("request", help="JSON file: {messages, tools, options} or a message list ('-' for stdin)")
    r.add_argument("--thinking", action="store_true")
    r.add_argument("--reasoning-effort")
    r.add_argument("--current-date")
    r.add_argument("--no-generation-prompt", action="store_true")
    r.add_argument("--segments", action="store_true", help="print the provenance segments as JSON lines")
    r.set_defaults(func=_cmd_render)

    q = sub.add_parser("parse", help="parse a model output (text file) and print the result as JSON")
    q.add_argument("--format", required=True)
    q.add_argument("--tools", help="JSON file with the tools (a list, or {tools: [...]})")
    q.add_argument("--thinking", action="store_true")
    q.add_argument("output", help="text file with the raw model output ('-' for stdin)")
    q.set_defaults(func=_cmd_parse)

    d = sub.add_parser("demo", help="render a bundled conversation and replay a bundled output as a stream")
    d.add_argument("--format", default="deepseek_v4")
    d.add_argument("--delay", type=float, default=0.0, help="seconds to pause between deltas")
    d.set_defaults(func=_cmd_demo)

    _add_optional_commands(sub)
    return p


def _add_optional_commands(sub: Any) -> None:
    """Commands whose modules may be absent from a partial build are added only when importable."""
    try:
        from toolwire.context_policy.cli import configure_parser as plan_cfg, run as plan_run
    except ImportError:
        pass
    else:
        pl = sub.add_parser("plan", help="show turns, steps and reasoning decisions for a conversation")
        plan_cfg(pl)
        pl.set_defaults(func=plan_run)
    try:
        from .fidelity import configure_parser as fid_cfg, run as fid_run
    except ImportError:
        pass
    else:
        fp = sub.add_parser("fidelity", help="compare a native renderer with a model's chat template")
        fid_cfg(fp)
        fp.set_defaults(func=fid_run)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ToolwireError as exc:
        print(f"toolwire: error [{exc.code}]: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
