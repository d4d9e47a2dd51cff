"""The toolwire command: formats, render, parse, grammar, plan, prefix, detect, fidelity, eval and demo.

One error contract for every command: a bad input (a missing or malformed file, an unknown format, a bad
option or field) prints ``toolwire: error [code]: ...`` naming the file or field and exits 2; ``fidelity``
exits 1 when the renderer and the template differ; an internal error exits 3. No Python traceback, ever.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

from toolwire import __version__
from toolwire.errors import ToolwireError
from toolwire.registry import formats, get_format

from . import data_cli
from .inputs import BadInput, limits_value, missing_extra, read_json, read_text, request_parts, require, tools_value

DESCRIPTION = ("Render requests into exact prompts, parse model output, plan reasoning, and check a native "
               "renderer against a model's chat template.")
EPILOG = ("Exit codes: 0 success; 1 fidelity found a difference, detect found no format, prefix found no "
          "extension; 2 bad input (message on stderr: 'toolwire: error [code]: ...'); 3 internal error.")

SHARED_HELP = {  # options of commands configured outside this module, which give no help text of their own
    "format": "the toolwire format name (see 'toolwire formats')",
    "conversation": "JSON file: {messages, tools, options} or a message list ('-' reads stdin)",
    "thinking": "thinking mode on",
    "policy": "override the family's reasoning-retention policy",
    "json": "print the result as JSON",
}


class _Parser(argparse.ArgumentParser):
    """argparse with the toolwire error line instead of its own usage dump and exit."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise BadInput("usage", f"{message} (see '{self.prog} --help')")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {text}")
    return value


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


# ---------------------------------------------------------------- commands

def _cmd_formats(args: argparse.Namespace) -> int:
    for name in formats():
        ref = get_format(name).reference
        print(f"{name:22} {ref}" if ref else name)
    return 0


def _render_options(args: argparse.Namespace, options: dict) -> dict:
    opts = dict(options)
    if args.thinking is not None:  # not given: the template's default (docs/options.md)
        opts["thinking"] = args.thinking
    if args.reasoning_effort is not None:
        effort = args.reasoning_effort
        opts["reasoning_effort"] = int(effort) if effort.isdigit() else effort
    if args.current_date:
        opts["current_date"] = args.current_date
    if args.no_generation_prompt:
        opts["add_generation_prompt"] = False
    if args.policy:
        opts["policy"] = args.policy
    return opts


def _load_tokenizer(spec: str) -> Any:
    from toolwire.tokenize import load_tokenizer

    try:
        return load_tokenizer(spec)
    except ImportError as exc:
        raise missing_extra(exc, "--tokenizer") from None
    except OSError as exc:
        raise BadInput("unreadable", f"tokenizer {spec}: {exc.strerror or exc}") from None


def _cmd_render(args: argparse.Namespace) -> int:
    fmt = get_format(args.format)
    if args.batch:
        return data_cli.run_render_batch(args, _render_options(args, {}))
    if args.request is None:
        raise BadInput("usage", "render needs a request file (or --batch IN --out OUT)")
    messages, tools, options = request_parts(read_json(args.request, "request"), args.request)
    prompt = fmt.render(messages, tools, **_render_options(args, options))
    if args.tokenizer:
        print(json.dumps(prompt.token_ids(_load_tokenizer(args.tokenizer))))
    elif args.segments:
        for seg in prompt.segments:
            print(json.dumps({"kind": seg.kind, "message_index": seg.message_index, "text": seg.text},
                             ensure_ascii=False))
    else:
        sys.stdout.write(prompt.text)
        if not prompt.text.endswith("\n"):
            sys.stdout.write("\n")
    return 0


def _cmd_parse(args: argparse.Namespace) -> int:
    fmt = get_format(args.format)
    if args.batch:
        return data_cli.run_parse_batch(args)
    if args.output is None:
        raise BadInput("usage", "parse needs an output file (or --batch IN --out OUT)")
    tools = tools_value(read_json(args.tools, "tools"), args.tools) if args.tools else None
    if args.validate and tools is None:
        raise BadInput("usage", "--validate needs --tools (the definitions to validate against)")
    if args.validate:
        require("jsonschema", "--validate")
    limits = limits_value(args)
    extra = {"limits": limits} if limits is not None else {}
    out = fmt.parse(read_text(args.output, "model output"), tools, thinking=args.thinking, **extra)
    if args.validate:
        try:
            out = out.validate(tools, **extra)
        except ImportError as exc:
            raise missing_extra(exc, "--validate") from None
    print(json.dumps(out.model_dump(), ensure_ascii=False, indent=2))
    return 0


def _tool_choice(text: str | None):
    """``--tool-choice``: auto / required / none, a tool name, or a JSON object."""
    if text is None or text in ("auto", "required", "none"):
        return text or "auto"
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise BadInput("usage", f"--tool-choice is not valid JSON: {exc}") from None
    return {"type": "function", "function": {"name": text}}


def _cmd_grammar(args: argparse.Namespace) -> int:
    fmt = get_format(args.format)
    tools = tools_value(read_json(args.tools, "tools"), args.tools)
    grammar = fmt.grammar(tools, tool_choice=_tool_choice(args.tool_choice), target=args.target,
                          thinking=args.thinking)
    if args.json or args.target == "xgrammar":
        print(json.dumps(grammar.to_dict(), ensure_ascii=False, indent=None if args.target == "xgrammar" else 2))
    else:
        sys.stdout.write(grammar.text)
        if grammar.target == "gbnf" and grammar.lazy:
            print("# grammar_lazy: true; grammar_triggers: " + json.dumps(list(grammar.grammar_triggers),
                                                                         ensure_ascii=False), file=sys.stderr)
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from toolwire.context_policy.cli import run as plan_run

    data = read_json(args.conversation, "conversation")
    request_parts(data, args.conversation)  # the shape check names the file
    get_format(args.format)
    return plan_run(args, data=data)


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import demo_formats, run_demo

    get_format(args.format)
    if args.format not in demo_formats():
        raise BadInput("no_demo_output", f"--format {args.format}: the demo has a bundled model output only for "
                                         f"{', '.join(demo_formats())}")
    return run_demo(delay=args.delay, format_name=args.format)


def _cmd_detect(args: argparse.Namespace) -> int:
    from .detect import detect_path

    result = detect_path(args.path)
    if args.json:
        print(json.dumps(result.as_json(), ensure_ascii=False, indent=2))
    else:
        print(result.describe())
    return 0 if result.format else 1


# ---------------------------------------------------------------- the parser

def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="toolwire", description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"toolwire {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    f = sub.add_parser("formats", help="list the format names and their references",
                       description="List every format name and what its renderer is byte-exact against.")
    f.set_defaults(func=_cmd_formats)

    r = sub.add_parser("render", help="render a request (JSON file) into a prompt",
                       description="Render a request into the format's exact prompt text (or its segments or ids).")
    r.add_argument("--format", required=True, help="the toolwire format name (see 'toolwire formats')")
    r.add_argument("request", nargs="?", help="JSON file: {messages, tools, options} or a message list ('-' reads "
                                              "stdin)")
    r.add_argument("--thinking", action=argparse.BooleanOptionalAction,
                   help="thinking mode on or off (enable_thinking in HF templates; default: the template's own)")
    r.add_argument("--reasoning-effort", help="reasoning effort (low, medium, high, max, or a number for V4.1)")
    r.add_argument("--current-date", help="today's date for formats that print it (YYYY-MM-DD)")
    r.add_argument("--no-generation-prompt", action="store_true",
                   help="do not end with the assistant generation prompt (toolwire adds it by default)")
    r.add_argument("--policy", choices=("keep_all", "drop_all", "keep_tool_loop"),
                   help="override which earlier reasoning is rendered (default: the family's own rule)")
    out = r.add_mutually_exclusive_group()
    out.add_argument("--segments", action="store_true", help="print the provenance segments as JSON lines")
    out.add_argument("--tokenizer", help="print the prompt's token ids (a JSON list) with this tokenizer folder "
                                         "or mistral:vN (needs toolwire[hf], [harmony] or [mistral])")
    data_cli.configure_batch(r, parse=False)
    r.set_defaults(func=_cmd_render)

    q = sub.add_parser("parse", help="parse a model output (text file) and print the result as JSON",
                       description="Parse a complete model output and print the ParsedOutput as JSON.")
    q.add_argument("--format", required=True, help="the toolwire format name (see 'toolwire formats')")
    q.add_argument("--tools", help="JSON file with the tool definitions (a list, or {tools: [...]})")
    q.add_argument("--thinking", action="store_true", help="the prompt opened a reasoning block")
    q.add_argument("--validate", action="store_true",
                   help="check the calls against the --tools schemas (needs toolwire[schema])")
    q.add_argument("output", nargs="?", help="text file with the raw model output ('-' reads stdin)")
    for flag, default in (("--max-calls", "128"), ("--max-argument-bytes", "1048576"), ("--max-depth", "64")):
        q.add_argument(flag, type=_positive_int, metavar="N",
                       help=f"toolwire.Limits: {flag[6:].replace('-', ' ')} per output/call before a call is rejected "
                            f"as too_large (default {default}); also with --batch")
    data_cli.configure_batch(q, parse=True)
    q.set_defaults(func=_cmd_parse)

    pl = sub.add_parser("plan", help="show turns, steps and reasoning decisions for a conversation",
                        description="Show which earlier reasoning a render keeps, and the pre-flight warnings.")
    from toolwire.context_policy.cli import configure_parser as plan_cfg

    plan_cfg(pl)
    pl.set_defaults(func=_cmd_plan)

    px = sub.add_parser("prefix", help="does the second request's prompt extend the first's? (prefix caching)",
                        description="Render two consecutive requests and say whether the second prompt extends the "
                                    "first; if not, where, in which message, and why. Exit 0 when it extends, 1 "
                                    "when it does not.")
    data_cli.configure_prefix(px)
    px.set_defaults(func=lambda a: data_cli.run_prefix(a, _load_tokenizer))

    ev = sub.add_parser("eval", help="evaluate tool use through the wire format (BFCL v4 or your own suite)",
                        description="'eval prompts' renders a suite for any engine; 'eval score' parses the raw "
                                    "outputs with the family's parser, scores them and attributes every miss.")
    data_cli.configure_eval(ev)
    ev.set_defaults(func=lambda a: data_cli.run_eval(a, _load_tokenizer))

    dt = sub.add_parser("detect", help="name the toolwire format of a chat template",
                        description="Name the toolwire format whose official chat template this is: by fingerprint "
                                    "of the known revisions, else by the tool-call markup the template holds or "
                                    "renders. Exit 0 when a format fits, 1 when none does, 2 on bad input (a "
                                    "missing or empty file, a Jinja syntax error).")
    dt.add_argument("path", help="a .jinja template, a tokenizer_config.json, or a model folder holding either")
    dt.add_argument("--json", action="store_true", help="print the verdict and the evidence as JSON")
    dt.set_defaults(func=_cmd_detect)

    from .fidelity import configure_parser as fid_cfg, run as fid_run

    g = sub.add_parser("grammar", help="print the constrained-decoding grammar of a format's tool calls",
                       description="Print the grammar that constrains this format's tool calls to the tools' schemas: "
                                   "an xgrammar structural tag (JSON), an llguidance Lark grammar, or llama.cpp GBNF "
                                   "(--json: the llama.cpp server fields grammar / grammar_lazy / grammar_triggers).")
    g.add_argument("--format", required=True, help="the toolwire format name (see 'toolwire formats')")
    g.add_argument("--tools", required=True, help="JSON file with the tool definitions (a list, or {tools: [...]})")
    g.add_argument("--target", default="xgrammar", choices=("xgrammar", "llguidance", "gbnf"),
                   help="the grammar target (default xgrammar)")
    g.add_argument("--tool-choice", help="auto (default), required, none, a tool name, or a JSON tool_choice object")
    g.add_argument("--thinking", action="store_true", help="the prompt opened a reasoning block")
    g.add_argument("--json", action="store_true", help="print the target's JSON request form")
    g.set_defaults(func=_cmd_grammar)

    fp = sub.add_parser("fidelity", help="compare a native renderer with a model's chat template",
                        description="Compare the native renderer with a chat template, scenario by scenario: bytes, "
                                    "tokens (with --tokenizer) and the round trip. Exit 0 when everything matches or "
                                    "differs only by a documented divergence, 1 on any other difference.")
    fid_cfg(fp)
    fp.set_defaults(func=fid_run)

    d = sub.add_parser("demo", help="render a bundled conversation and replay a bundled output as a stream",
                       description="Render a bundled conversation, stream-parse a bundled model output, validate it.")
    d.add_argument("--format", default="deepseek_v4", help="a format with bundled demo output (default deepseek_v4)")
    d.add_argument("--delay", type=_non_negative, default=0.0, help="seconds to pause between deltas (0 or more)")
    d.set_defaults(func=_cmd_demo)

    for action in _all_actions(p):
        if action.help is None:
            action.help = SHARED_HELP.get(action.dest)
    return p


def _all_actions(parser: argparse.ArgumentParser):
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _all_actions(child)


def _silence_stdout() -> None:
    """After a broken pipe (``toolwire parse ... | head``): point stdout at /dev/null so the interpreter's
    final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _error(code: str, message: str) -> None:
    print(f"toolwire: error [{code}]: {message}", file=sys.stderr)


class _NoTorchAdvice:
    """Drops transformers' import-time advice that PyTorch is missing: toolwire loads tokenizers only, so on every
    ``--tokenizer`` command the line was noise (a logging filter on the ``transformers`` logger, CLI only)."""

    def filter(self, record) -> bool:
        return not str(record.msg).startswith("PyTorch was not found")


def _quiet_transformers() -> None:
    import logging

    log = logging.getLogger("transformers")
    if not any(isinstance(f, _NoTorchAdvice) for f in log.filters):
        log.addFilter(_NoTorchAdvice())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 fidelity difference, 2 bad input, 3 internal)."""
    _quiet_transformers()
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except ToolwireError as exc:
        _error(exc.code, str(exc))
        return 2
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        _error("interrupted", "interrupted")
        return 130
    except ImportError as exc:
        err = missing_extra(exc, "this command")
        _error(err.code, str(err))
        return 2
    except Exception as exc:  # noqa: BLE001 - the contract: never a traceback
        _error("internal", f"{type(exc).__name__}: {exc} (this is a toolwire bug; please report it "
                           "with the command line)")
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
