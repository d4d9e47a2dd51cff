"""``toolwire demo``: render a bundled conversation, replay a bundled model output as a live stream,
and print the typed tool-call candidates. This is what ``make demo`` runs."""

from __future__ import annotations

import json
import random
import sys
import time
from importlib import resources

from toolwire.registry import get_format

_KIND_STYLE = {"special": "\033[1;35m", "template": "\033[2m", "content": ""}
_RESET = "\033[0m"


def _data(name: str) -> str:
    return resources.files("toolwire.workbench").joinpath("demo_data", name).read_text(encoding="utf-8")


def demo_formats() -> list[str]:
    """The formats with a bundled model output (``demo_data/output_<format>.txt``)."""
    folder = resources.files("toolwire.workbench").joinpath("demo_data")
    return sorted(p.name[len("output_"):-len(".txt")] for p in folder.iterdir()
                  if p.name.startswith("output_") and p.name.endswith(".txt"))


def _paint(kind: str, text: str, color: bool) -> str:
    return f"{_KIND_STYLE[kind]}{text}{_RESET}" if color and _KIND_STYLE[kind] else text


def run_demo(*, delay: float = 0.0, format_name: str = "deepseek_v4", out=None) -> int:
    """Run the demo; returns the process exit code."""
    out = out or sys.stdout
    color = out.isatty()
    request = json.loads(_data("conversation.json"))
    fmt = get_format(format_name)
    opts = request.get("options", {})

    print(f"== 1. render: {len(request['messages'])} messages, {len(request['tools'])} tools -> {fmt.name} "
          f"(thinking={opts.get('thinking', False)})", file=out)
    prompt = fmt.render(request["messages"], request["tools"], **opts)
    kinds = {k: sum(len(s.text) for s in prompt.segments if s.kind == k) for k in ("special", "template", "content")}
    print("".join(_paint(s.kind, s.text, color) for s in prompt.segments), file=out)
    print(f"-- {len(prompt.text)} chars in {len(prompt.segments)} segments "
          f"(special {kinds['special']}, template {kinds['template']}, content {kinds['content']}); "
          f"opens_reasoning={prompt.opens_reasoning}", file=out)

    output = _data(f"output_{format_name}.txt")
    print(f"\n== 2. stream-parse a {len(output)}-char model output in random 1-12 char deltas", file=out)
    parser = fmt.stream(request["tools"], prompt=prompt)
    rng = random.Random(7)
    pos, n_deltas, current = 0, 0, None
    while pos <= len(output):
        step = rng.randint(1, 12)
        events = parser.feed(output[pos:pos + step]) if pos < len(output) else parser.flush()
        pos += step if pos < len(output) else 1
        n_deltas += 1
        for ev in events:
            label = ev.type if ev.type not in ("arguments",) else f"args#{ev.index}"
            if label != current:
                out.write(f"\n  [{label}] ")
                current = label
            if ev.type in ("content", "reasoning"):
                out.write(ev.text)
            elif ev.type == "arguments":
                out.write(ev.fragment)
            elif ev.type == "tool_call_started":
                out.write(f"#{ev.index} {ev.name} (id {ev.id})")
            elif ev.type == "tool_call_finished":
                out.write(f"#{ev.index} {ev.candidate.status}")
        out.flush()
        if delay:
            time.sleep(delay)
    result = parser.finish()
    print(f"\n-- {n_deltas} deltas", file=out)

    print("\n== 3. typed candidates, validated against the tool schemas (requests for your dispatch core; "
          "toolwire never executes them)", file=out)
    checked = _validated(result, request["tools"], out)
    for call in checked.tool_calls:
        print(f"  #{call.index} {call.status:9} {call.name}({json.dumps(call.arguments, ensure_ascii=False)})"
              f"  source={call.source}", file=out)
        if call.status == "validated":
            print(f"      canonical {json.dumps(call.canonical_arguments, ensure_ascii=False)}  "
                  f"idempotency key {call.fingerprint(scope={'tenant': 'demo'})[:16]}…", file=out)
        for d in call.diagnostics:
            print(f"      {d.severity}: [{d.code}] {d.message}", file=out)
    result = checked
    print(f"  finish_reason: {result.finish_reason()}", file=out)
    print(f"  content:   {result.content!r}", file=out)
    print(f"  reasoning: {len(result.reasoning)} chars; truncated={result.truncated}; "
          f"diagnostics={[d.code for d in result.diagnostics]}", file=out)
    return 0


def _validated(result, tools, out):
    """Schema-validate when jsonschema is installed (``toolwire[schema]``); otherwise say so and go on."""
    from toolwire.errors import MissingExtra

    try:
        return result.validate(tools)
    except MissingExtra as exc:
        print(f"  (not validated: {exc})", file=out)
        return result
