"""Byte identity of every output, before and after a speed change.

    python -m bench.output_identity --write /tmp/before.json     # on the code before the change
    python -m bench.output_identity --check /tmp/before.json     # after it: exit 1 and the first difference

For every format it records a digest of:

* ``render``: every golden render request of every family (35 x ~1,700 requests), with thinking on and off:
  the prompt text, its segments (kind, text and message index) and where parsing starts, or the refusal (error type and
  message);
* ``render_random``: 300 seeded random conversations (1 to 40 turns of user, assistant with reasoning and
  calls, tool results; texts with markers, escapes and non-ASCII; golden tools), thinking on and off;
* ``tokens``: ``render_tokens`` ids of the format's own golden requests, for the formats with a real
  tokenizer in ``../shared/real/tokenizers``;
* ``parse``: every golden model output of every family, parsed in one piece, streamed 1 character at a
  time (own family only) and in seeded random chunks, with thinking on and off: the whole ParsedOutput and
  the stream events (a call's ``arguments_text`` as ``arguments_json()``, the bytes a client reads);
* ``parse_ids``: the format's own golden outputs fed as token ids, for the formats with a real tokenizer;
* ``soup``: a seeded random corpus (400 per format) of the format's markers, other families' markers, stop
  tokens, JSON/XML punctuation, escapes and text, parsed one-shot and in random chunks.

Renders are dated 2026-12-01 (the date the baseline of this round was recorded): the ``date`` and
``datetime`` the templates read are frozen, so a digest does not change with the day.

Digests are per item (so ``--check`` names the first item that differs) and per section. Not a benchmark:
a tool for the "every output byte-identical" rule of speed work (bench/README.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import hashlib
import json
import random
import sys
import time
from functools import cache
from pathlib import Path

import toolwire
from toolwire.output import ToolCallFinished

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GOLDEN = SHARED / "golden"
TOKENIZERS = SHARED / "real" / "tokenizers"
REAL_TOKENIZER = {
    **dict.fromkeys(["qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "qwen3_coder", "qwen35",
                     "qwen36", "qwen38"], "Qwen3"),
    **dict.fromkeys(["deepseek_v32", "deepseek_v4", "deepseek_v41"], "DeepSeek-V4"),
    **dict.fromkeys(["deepseek_v31", "deepseek_r1"], "DeepSeek-V3"),
    "llama31": "Llama-3", "llama32": "Llama-3", "llama4": "Llama-4", "gpt_oss": "o200k_base",
}
SYNTAX = ['{"name": "', '", "arguments": ', '{"', '": ', '"', "}", "]", "[", ",", "\\", '\\"', "\\n", "\\u00e9",
          "<parameter=", "</parameter>", "<function=", "</function>", "<arg_key>", "</arg_key>", "<arg_value>",
          "</arg_value>", '<invoke name="', '">', "</invoke>", '<parameter name="', "\n", " ", "\t", "null", "true",
          "1.5e3", "-0", "é", "😀", "\x00", "get_weather", "city", "Paris"]
SOUP_PER_FORMAT = 400
RANDOM_REQUESTS = 300


def _rows(kind: str) -> list[dict]:
    rows = []
    for path in sorted((GOLDEN / kind).glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            rows.extend(json.loads(line) for line in fh if line.strip())
    return rows


def _h(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str, ensure_ascii=False).encode()).hexdigest()[:16]


def _call_dump(call) -> dict:
    """A candidate's fields, with ``arguments_text`` as the bytes a client reads (``arguments_json()``: the
    field is None where those are ``json.dumps(arguments)``, see ToolCallCandidate)."""
    return {**call.model_dump(), "arguments_text": call.arguments_json()}


def _output_dump(output) -> dict:
    return {**output.model_dump(), "tool_calls": [_call_dump(call) for call in output.tool_calls]}


def _event(event) -> list:
    if isinstance(event, ToolCallFinished):
        return [type(event).__name__, event.index, _call_dump(event.candidate), event.type]
    return [type(event).__name__, *(dataclasses.astuple(event) if dataclasses.is_dataclass(event) else [repr(event)])]


def _refusal(exc: Exception) -> list:
    return ["error", type(exc).__name__, str(exc)]


def _render(fmt, request: dict, thinking: bool):
    try:
        prompt = fmt.render(request["messages"], request.get("tools"), thinking=thinking)
    except Exception as exc:  # a refusal is an output too
        return _refusal(exc)
    return [prompt.text, [(s.kind, s.text, s.message_index) for s in prompt.segments],
            getattr(prompt, "opens_reasoning", None)]


TEXTS = ["Hello!", "What is 2+2?", "", " ", "line one\nline two", 'quote " and \\ backslash', "é 😀 中文",
         "<tool_call>", "</think>", "<|im_end|>", '{"a": 1}', "  padded  ", "\t tab"]


def _random_request(rng: random.Random, tools: list) -> dict:
    messages: list[dict] = []
    if rng.random() < 0.5:
        messages.append({"role": "system", "content": rng.choice(TEXTS)})
    for _ in range(rng.randint(1, 20)):
        messages.append({"role": "user", "content": rng.choice(TEXTS) or "hi"})
        turn: dict = {"role": "assistant", "content": rng.choice(TEXTS)}
        if rng.random() < 0.5:
            turn["reasoning_content"] = rng.choice(TEXTS) or "hmm"
        if tools and rng.random() < 0.5:
            calls = []
            for n in range(rng.randint(1, 3)):
                fn = rng.choice(tools)["function"]
                args = {key: rng.choice([rng.choice(TEXTS), 1, 2.5, True, None, [1, "x"], {"k": "v"}])
                        for key in list((fn.get("parameters") or {}).get("properties", {}))[:3]}
                calls.append({"id": f"call_{len(messages)}_{n}", "type": "function",
                              "function": {"name": fn["name"], "arguments": json.dumps(args, ensure_ascii=False)}})
            turn["tool_calls"] = calls
            messages.append(turn)
            for call in calls:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": rng.choice(TEXTS) or "ok"})
            messages.append({"role": "assistant", "content": rng.choice(TEXTS) or "done"})
        else:
            messages.append(turn)
    messages.append({"role": "user", "content": rng.choice(TEXTS) or "next"})
    return {"messages": messages, "tools": tools if tools and rng.random() < 0.8 else None}


def _parse(fmt, text: str, tools, thinking: bool, chunks: list[str] | None, tokenizer=None, ids=None):
    try:
        if chunks is None and ids is None:
            return ["oneshot", _output_dump(fmt.parse(text, tools, thinking=thinking))]
        parser = fmt.stream(tools, thinking=thinking, tokenizer=tokenizer) if tokenizer else \
            fmt.stream(tools, thinking=thinking)
        events = []
        if ids is not None:
            for i in range(0, len(ids), 3):
                events.extend(parser.feed(ids=ids[i:i + 3]))
        else:
            for piece in chunks:
                events.extend(parser.feed(piece))
        events.extend(parser.flush())
        return [[_event(e) for e in events], _output_dump(parser.result) if hasattr(parser, "result") else None]
    except Exception as exc:  # a parser must not raise; if it does, that is recorded (and differs)
        return _refusal(exc)


def _chunks(text: str, rng: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        step = rng.choice((1, 2, 3, 5, 8, 17, 64))
        out.append(text[i:i + step])
        i += step
    return out


@cache
def _tokenizer(name: str):
    from toolwire.tokenize import load_tokenizer

    return load_tokenizer(str(TOKENIZERS / name))


def _soup(fmt, rng: random.Random, others: list[str]) -> str:
    own = [m for m in fmt.markers.values() if m]
    stops = list(getattr(fmt, "stop_tokens", ()) or ())
    pieces = []
    for _ in range(rng.randint(1, 40)):
        roll = rng.random()
        if roll < 0.35 and own:
            pieces.append(rng.choice(own))
        elif roll < 0.45 and others:
            pieces.append(rng.choice(others))
        elif roll < 0.5 and stops:
            pieces.append(rng.choice(stops))
        elif roll < 0.85:
            pieces.append(rng.choice(SYNTAX))
        else:
            pieces.append("".join(rng.choice("ab c\n{}\"'<>=:/|") for _ in range(rng.randint(1, 12))))
    return "".join(pieces)


FROZEN_DAY = datetime.date(2026, 12, 1)


class _FrozenDate(datetime.date):
    @classmethod
    def today(cls):
        return cls(FROZEN_DAY.year, FROZEN_DAY.month, FROZEN_DAY.day)


class _FrozenDateTime(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls(FROZEN_DAY.year, FROZEN_DAY.month, FROZEN_DAY.day, 12, 0, 0, tzinfo=tz)

    @classmethod
    def today(cls):
        return cls.now()


def _freeze_clock() -> None:
    """Load every format's renderer, then point the ``date`` / ``datetime`` names of the template modules at
    classes whose today/now is :data:`FROZEN_DAY`."""
    for name in toolwire.formats():
        try:
            toolwire.get_format(name).render([{"role": "user", "content": "hi"}])
        except Exception:  # only loading the modules matters here
            pass
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith(("toolwire.templates", "templates")) or module is None:
            continue
        if getattr(module, "date", None) is datetime.date:
            module.date = _FrozenDate
        if getattr(module, "datetime", None) is datetime.datetime:
            module.datetime = _FrozenDateTime


def digest(names: list[str] | None = None, progress: bool = True) -> dict:
    """Per format and section: the per-item digests and their count."""
    _freeze_clock()
    render_rows, parse_rows = _rows("render"), _rows("parse")
    all_markers = sorted({m for n in toolwire.formats() for m in toolwire.get_format(n).markers.values() if m})
    out: dict = {}
    for name in names or toolwire.formats():
        started = time.perf_counter()
        fmt = toolwire.get_format(name)
        rng = random.Random(f"identity/{name}")
        sections: dict[str, list[str]] = {"render": [], "render_random": [], "tokens": [], "parse": [], "parse_ids": [], "soup": []}
        for row in render_rows:
            for thinking in (False, True):
                sections["render"].append(_h(_render(fmt, row["request"], thinking)))
        golden_tools = [t for r in render_rows if r["request"].get("tools") for t in r["request"]["tools"]]
        tool_pool = list({t["function"]["name"]: t for t in golden_tools}.values())
        for _ in range(RANDOM_REQUESTS):
            request = _random_request(rng, rng.sample(tool_pool, min(len(tool_pool), rng.randint(0, 4))))
            for thinking in (False, True):
                sections["render_random"].append(_h(_render(fmt, request, thinking)))
        tok_name = REAL_TOKENIZER.get(name)
        tokenizer = _tokenizer(tok_name) if tok_name and (TOKENIZERS / tok_name).is_dir() else None
        if tokenizer is not None:
            for _ in range(RANDOM_REQUESTS // 3):
                request = _random_request(rng, rng.sample(tool_pool, min(len(tool_pool), rng.randint(0, 4))))
                try:
                    sections["tokens"].append(_h(list(fmt.render_tokens(request["messages"], request["tools"],
                                                                        tokenizer).ids)))
                except Exception as exc:
                    sections["tokens"].append(_h(_refusal(exc)))
            for row in render_rows:
                if row["family"] != name or "expected_error" in row:
                    continue
                try:
                    ids = list(fmt.render_tokens(row["request"]["messages"], row["request"].get("tools"),
                                                 tokenizer, **row.get("options", {})).ids)
                    sections["tokens"].append(_h(ids))
                except Exception as exc:
                    sections["tokens"].append(_h(_refusal(exc)))
        for row in parse_rows:
            text, tools = row["model_output"], row.get("tools")
            own = row["family"] == name
            for thinking in (False, True):
                sections["parse"].append(_h(_parse(fmt, text, tools, thinking, None)))
                sections["parse"].append(_h(_parse(fmt, text, tools, thinking, _chunks(text, rng))))
                if own:
                    sections["parse"].append(_h(_parse(fmt, text, tools, thinking, list(text))))
            if own and tokenizer is not None:
                from toolwire.tokenize import vocabulary

                ids = vocabulary(tokenizer).encode(text)
                for thinking in (False, True):
                    sections["parse_ids"].append(_h(_parse(fmt, text, tools, thinking, None, tokenizer, ids)))
        others = [m for m in all_markers if m not in set(fmt.markers.values())]
        tools = next((r["tools"] for r in parse_rows if r["family"] == name and r.get("tools")), None)
        for _ in range(SOUP_PER_FORMAT):
            text = _soup(fmt, rng, others)
            thinking = rng.random() < 0.5
            sections["soup"].append(_h(_parse(fmt, text, tools, thinking, None)))
            sections["soup"].append(_h(_parse(fmt, text, tools, thinking, _chunks(text, rng))))
        out[name] = {sec: {"digest": _h(items), "count": len(items), "items": items}
                     for sec, items in sections.items()}
        if progress:
            counts = ", ".join(f"{sec} {len(items)}" for sec, items in sections.items())
            print(f"{name:22s} {counts}  ({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)
    return out


def compare(before: dict, after: dict) -> list[str]:
    """The differences, one line each (format, section, first differing item)."""
    lines = []
    for name in sorted(set(before) | set(after)):
        if name not in before or name not in after:
            lines.append(f"{name}: only {'after' if name in after else 'before'}")
            continue
        for sec, old in before[name].items():
            new = after[name].get(sec)
            if new is None or new["digest"] != old["digest"]:
                items_new = (new or {}).get("items", [])
                first = next((i for i, (a, b) in enumerate(zip(old["items"], items_new)) if a != b),
                             min(len(old["items"]), len(items_new)))
                lines.append(f"{name} {sec}: differs (count {old['count']} -> {len(items_new)}, first item {first})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.output_identity", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="FILE", help="record the digests of the current code")
    mode.add_argument("--check", metavar="FILE", help="compare the current code with a recorded file")
    parser.add_argument("--format", action="append", dest="formats", help="only these formats (repeatable)")
    args = parser.parse_args(argv)
    if not GOLDEN.is_dir():
        print(f"output_identity: {GOLDEN} is absent (../shared must sit beside the checkout)", file=sys.stderr)
        return 2
    now = digest(args.formats)
    if args.write:
        Path(args.write).write_text(json.dumps(now), encoding="utf-8")
        total = sum(s["count"] for f in now.values() for s in f.values())
        print(f"wrote {args.write}: {len(now)} formats, {total} outputs")
        return 0
    before = json.loads(Path(args.check).read_text(encoding="utf-8"))
    if args.formats:
        before = {k: v for k, v in before.items() if k in args.formats}
    diffs = compare(before, now)
    total = sum(s["count"] for f in now.values() for s in f.values())
    if diffs:
        print("\n".join(diffs))
        print(f"output_identity: {len(diffs)} section(s) differ")
        return 1
    print(f"identical: {len(now)} formats, {total} outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
