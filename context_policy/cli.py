"""``toolwire plan --format F conversation.json [--thinking] [--policy P]``: print boundaries, decisions
and warnings."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .plan import plan


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", required=True)
    p.add_argument("conversation", help="JSON file: {messages, tools, options} or a message list")
    p.add_argument("--thinking", action="store_true")
    p.add_argument("--policy", choices=["keep_all", "drop_all", "keep_tool_loop"])
    p.add_argument("--json", action="store_true", help="print the plan as JSON")


def run(args: argparse.Namespace, data: object = None) -> int:
    """Print the plan; ``data`` is the conversation already read (``toolwire plan`` reads files and stdin)."""
    if data is None:
        data = json.loads(Path(args.conversation).read_text(encoding="utf-8"))
    messages, tools, options = (data, None, {}) if isinstance(data, list) else (
        data["messages"], data.get("tools"), dict(data.get("options") or {}))
    thinking = args.thinking or bool(options.pop("thinking", False))
    extra = {k: v for k, v in options.items() if k in ("drop_thinking", "preserve_thinking", "clear_thinking")}
    p = plan(messages, args.format, thinking=thinking, policy=args.policy, tools=tools, **extra)
    if args.json:
        print(p.model_dump_json(indent=2, exclude={"messages"}))
        return 0
    print(f"format {p.format}, policy {p.policy}, thinking={thinking}")
    print(f"turns start at messages {p.turns}; steps (model calls) at {p.steps}")
    for d in p.decisions:
        note = "" if d.has_reasoning else " (no reasoning given)"
        print(f"  message {d.message_index:3}: {d.action:8} {d.reason}{note}")
    if p.warnings:
        print("warnings:")
        for w in p.warnings:
            print(f"  [{w.code}] {w.message}")
    else:
        print("no warnings")
    return 0
