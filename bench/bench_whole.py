"""Whole-output parsing: one ~50 MB model output per family, parsed in one piece, against SGLang.

Each case is one ``search``/``write_file`` call whose string argument makes the output ~:data:`SIZE_MB` MB
(``BENCH_WHOLE_MB`` overrides it): for the JSON families the escape-dense text of ``bench_qwen``'s
``escapes`` filler (quotes, backslashes, newlines, brackets, ``</tool_call>`` spelled out), for the XML-style
families raw code-like text with near-miss closing tags. toolwire runs ``Format.parse(text, tools,
limits=Limits(max_argument_bytes=1 GiB))`` (the default limit of 1 MiB would refuse such a value with
``too_large``: a server's bound, not the parser's); SGLang runs its detector's ``detect_and_parse(text,
tools)``, the family's detector that ``.bench-venv`` imports (``bench/setup_peers.sh``). Both results are
checked against the arguments the output was built from; a peer that returns other ones is reported, not timed.

``python -m bench.bench_whole [FAMILY ...]`` measures those rows only (default: every case in :data:`CASES`).
Every measurement runs in a fresh subprocess, one at a time: CPU time of the parse (``time.process_time``,
all threads) in one, peak memory in another (``tracemalloc``: the peak of what the parse allocates beyond the
output text itself, which exists before; the ratio is that peak over the output's UTF-8 size). Targets
(issue 18): at least as fast as SGLang in every family (ratio = SGLang / toolwire >= 1), peak memory at most
3x the output.

What toolwire keeps for a call, and so the floor of its memory: ``raw_arguments`` (the argument text as
written), ``arguments`` (the decoded value) and ``arguments_text`` (the streamed fragments joined: for a
proposed JSON call the same string object as ``raw_arguments``, so kept once). XML-style families keep the
raw value text and the value (the same string when no entity is decoded).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from bench import harness

SIZE_MB = float(os.environ.get("BENCH_WHOLE_MB", "50"))
SEARCH = [{"type": "function", "function": {"name": "search", "description": "Search.", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}}}}]
WRITE = [{"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"]}}}]

JSON_FILLER = 'lorem \u00e9t "quoted" \\ {braces} [x] </tool_call>\n'
"""Escape-dense JSON string text (``bench_qwen``'s ``escapes`` filler): 4 escapes in 44 characters."""
XML_FILLER = "if a < b and c </par> d:\n        print('</parameter x', \"\u00e9\") # {x: [1]}\n"
"""Raw value text for the XML-style families (``bench_xml``'s code line): ``<`` and near-miss closing tags; it
starts with a letter (SGLang's DSML detector strips a value's leading blanks)."""


def _fill(filler: str, size: int) -> str:
    """``size`` characters of ``filler`` repeated, ending in a letter (peers strip a value's trailing blanks)."""
    return (filler * (size // len(filler) + 1))[:size - 3] + "end"


def _json_call(before: str, after: str) -> Callable[[int], tuple[str, list, dict]]:
    def build(size: int) -> tuple[str, list, dict]:
        args = {"q": _fill(JSON_FILLER, size), "limit": 3}
        return before + json.dumps(args, ensure_ascii=False) + after, SEARCH, args
    return build


def _xml_call(head: str, tail: str) -> Callable[[int], tuple[str, list, dict]]:
    def build(size: int) -> tuple[str, list, dict]:
        value = _fill(XML_FILLER, size)
        return head + value + tail, WRITE, {"path": "a.py", "content": value}
    return build


def _dsml(size: int) -> tuple[str, list, dict]:
    import toolwire

    m = toolwire.get_format("deepseek_v4").markers
    value = _fill(XML_FILLER, size)
    text = (f"{m['tool_calls_open']}\n{m['invoke_open']}write_file\">\n"
            f"{m['parameter_open']}path\" string=\"true\">a.py{m['parameter_close']}\n"
            f"{m['parameter_open']}content\" string=\"true\">{value}{m['parameter_close']}\n"
            f"{m['invoke_close']}\n{m['tool_calls_close']}")
    return text, WRITE, {"path": "a.py", "content": value}


CASES: dict[str, tuple[str, Callable[[int], tuple[str, list, dict]]]] = {
    # toolwire format: (SGLang "module.Class", builder(size) -> (output, tools, arguments))
    "qwen25": ("qwen25_detector.Qwen25Detector", _json_call('<tool_call>\n{"name": "search", "arguments": ',
                                                            "}\n</tool_call>")),
    "kimi_k2": ("kimik2_detector.KimiK2Detector", _json_call(
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>",
        "<|tool_call_end|><|tool_calls_section_end|>")),
    "deepseek_v31": ("deepseekv31_detector.DeepSeekV31Detector", _json_call(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>", "<｜tool▁call▁end｜><｜tool▁calls▁end｜>")),
    "deepseek_r1": ("deepseekv3_detector.DeepSeekV3Detector", _json_call(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n",
        "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>")),
    "llama31": ("llama32_detector.Llama32Detector", _json_call('{"name": "search", "parameters": ', "}")),
    "ministral3": ("mistral_detector.MistralDetector", _json_call("[TOOL_CALLS]search[ARGS]", "")),
    "qwen3_coder": ("qwen3_coder_detector.Qwen3CoderDetector", _xml_call(
        "<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n<parameter=content>\n",
        "\n</parameter>\n</function>\n</tool_call>")),
    "deepseek_v4": ("deepseekv4_detector.DeepSeekV4Detector", _dsml),
    "glm45": ("glm4_moe_detector.Glm4MoeDetector", _xml_call(
        "<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>a.py</arg_value>\n<arg_key>content</arg_key>\n"
        "<arg_value>", "</arg_value>\n</tool_call>")),
    "glm47": ("glm47_moe_detector.Glm47MoeDetector", _xml_call(
        "<tool_call>write_file<arg_key>path</arg_key><arg_value>a.py</arg_value><arg_key>content</arg_key>"
        "<arg_value>", "</arg_value></tool_call>")),
    "minimax_m2": ("minimax_m2.MinimaxM2Detector", _xml_call(
        '<minimax:tool_call>\n<invoke name="write_file">\n<parameter name="path">a.py</parameter>\n'
        '<parameter name="content">', "</parameter>\n</invoke>\n</minimax:tool_call>")),
}


# ---------------------------------------------------------------- one measurement (in its own process)

def _parser(family: str, who: str, tools: list) -> Callable[[str], dict | None]:
    """``parse(text) -> arguments of the first call`` for toolwire or SGLang."""
    if who == "toolwire":
        import toolwire
        from toolwire import Limits

        fmt = toolwire.get_format(family)
        limits = Limits(max_argument_bytes=1 << 30)

        def parse(text: str) -> dict | None:
            calls = fmt.parse(text, tools, limits=limits).tool_calls
            return calls[0].arguments if calls else None
        return parse
    module_name, class_name = CASES[family][0].split(".")
    import importlib

    detector = getattr(importlib.import_module(f"sglang.srt.function_call.{module_name}"), class_name)()
    protocol = importlib.import_module("sglang.srt.entrypoints.openai.protocol")
    sg_tools = [protocol.Tool.model_validate(t) for t in tools]

    def parse(text: str) -> dict | None:
        calls = detector.detect_and_parse(text, sg_tools).calls
        return json.loads(calls[0].parameters) if calls else None
    return parse


def measure(family: str, who: str, what: str, size: int) -> dict:
    """CPU seconds (``what="cpu"``) or peak traced bytes (``"mem"``) of one parse; ``ok`` says whether the
    arguments came out right."""
    text, tools, args = CASES[family][1](size)
    parse = _parser(family, who, tools)
    nbytes = len(text.encode("utf-8"))
    if what == "mem":
        import tracemalloc

        tracemalloc.start()
        got = parse(text)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return {"ok": got == args, "peak": peak, "bytes": nbytes}
    start = time.process_time()
    got = parse(text)
    return {"ok": got == args, "cpu": time.process_time() - start, "bytes": nbytes}


def _run(family: str, who: str, what: str, size: int) -> dict:
    """:func:`measure` in a fresh interpreter (a failure or a missing peer is reported as ``error``)."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "bench.bench_whole", "--child", family, who, what, str(size)],
                          cwd=root, capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:120]}
    return json.loads(lines[-1])


# ---------------------------------------------------------------- the table

def main(families: list[str] | None = None) -> None:
    """One row per family (``families``: these only, in this order; default every case): CPU seconds and peak
    memory / output size, toolwire and SGLang, and the ratio."""
    size = int(SIZE_MB * 1_000_000)
    sglang = harness.optional_import("sglang.srt.function_call.base_format_detector") is not None
    unknown = sorted(set(families or ()) - set(CASES))
    if unknown:
        raise SystemExit(f"no whole-output case for {unknown}; cases: {', '.join(CASES)}")
    rows = []
    for family in families or CASES:
        cells: dict[str, dict] = {}
        for who in ("toolwire", "sglang") if sglang else ("toolwire",):
            cpu, mem = _run(family, who, "cpu", size), _run(family, who, "mem", size)
            cells[who] = {**mem, **cpu, "peak": mem.get("peak"), "ok": cpu.get("ok") and mem.get("ok")}
        rows.append(_row(family, cells))
    print(f"\nwhole-output parse, one call with a ~{SIZE_MB:g} MB string argument (CPU s; peak traced memory / "
          "output size)\n")
    harness.print_table(["family", "MB", "toolwire s", "toolwire peak", "SGLang detector", "SGLang s", "SGLang peak",
                         "SGLang / toolwire"], rows, align="lrrrlrrr")


def _cell(result: dict) -> tuple[str, str]:
    if "error" in result:
        return f"error: {result['error']}", "-"
    if not result.get("ok"):
        return harness.WRONG, "-"
    return f"{result['cpu']:.2f}", f"{result['peak'] / result['bytes']:.2f}x"


def _row(family: str, cells: dict[str, dict]) -> list:
    tw = cells["toolwire"]
    tw_s, tw_peak = _cell(tw)
    detector = CASES[family][0].split(".")[1]
    sg = cells.get("sglang", {"error": "SGLang missing"})
    sg_s, sg_peak = _cell(sg)
    ratio = "-"
    if tw.get("ok") and sg.get("ok") and "cpu" in tw and "cpu" in sg:
        ratio = f"{sg['cpu'] / tw['cpu']:.1f}x"
    mb = f"{tw['bytes'] / 1e6:.0f}" if "bytes" in tw else "-"
    harness.record("whole output", f"{family}, {mb} MB, CPU s (peak / size)", f"{tw_s} ({tw_peak})",
                   f"SGLang {detector}", f"{sg_s} ({sg_peak})", ratio)
    return [family, mb, tw_s, tw_peak, detector, sg_s, sg_peak, ratio]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        family, who, what, size = sys.argv[2:6]
        print(json.dumps(measure(family, who, what, int(size))))
    else:  # python -m bench.bench_whole [FAMILY ...]: those rows only (one at a time on a busy machine)
        print(harness.environment())
        main(sys.argv[1:])
