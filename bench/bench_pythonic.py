"""LFM2.5 and Llama 4 pythonic streaming (the pythonic call engine): per-delta cost while one argument grows to
1k..64k characters, in each family's own call syntax (timing: :mod:`bench.harness`).

Three outputs: a ``write_file`` string argument (raw between quotes, as the templates write it: code-like text
with newlines, ``<`` and quotes that look like a value's end without being one) for each family, and an LFM2.5
list of short strings (``lines=['…', '…', …]``, Python's literal: escapes decoded, items sent as they close).
Peers: SGLang's ``PythonicDetector`` and vLLM's ``llama4_pythonic`` parser where they import (``.bench-venv``),
on the code-like value (where they return other arguments: reported, not timed) and on a plain one (words and
commas only) that they read, for the side-by-side ratio.
Target: toolwire's per-delta cost at 64k is at most 2x its cost at 1k.
"""

from __future__ import annotations

from bench import harness

TOOLS = [{"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"},
                                     "lines": {"type": "array", "items": {"type": "string"}}},
    "required": ["path"]}}}]
CALLS = {  # family -> (text before the value, text after it, the unit the value repeats)
    "lfm25": ("<|tool_call_start|>[write_file(path='a.py', content='", "')]<|tool_call_end|>",
              "    if a < b and c </tool> d:\n        print('done', \"\u00e9\")\n"),
    "llama4_pythonic": ('[write_file(path="a.py", content="', '")]',
                        "    if a < b and c </tool> d:\n        print('done', '\u00e9')\n"),
}


PLAIN_UNIT = "the quick brown fox jumps over the lazy dog, "
"""A value every peer reads (no newline, quote or escape inside the Python string): the side-by-side ratio."""


def outputs(family: str, unit: str | None = None):
    head, tail, own_unit = CALLS[family]
    unit = unit or own_unit

    def output(size: int) -> tuple[str, dict, int]:
        value = (unit * (size // len(unit) + 1))[:size]
        return head + value + tail, {"path": "a.py", "content": value}, len(head)

    return output


def list_output(size: int) -> tuple[str, dict, int]:
    """``lines=['line 0', 'it\\'s 1', …]``: a list value of about ``size`` characters."""
    head = "<|tool_call_start|>[write_file(path='a.py', lines=["
    items, written, n = [], 0, 0
    while written < size:
        item = f"it's line {n} <\u00e9>"
        items.append(item)
        written += len(repr(item)) + 2
        n += 1
    return head + ", ".join(map(repr, items)) + "])]<|tool_call_end|>", {"path": "a.py", "lines": items}, len(head)


def main() -> None:
    """Print one table per output."""
    import toolwire

    peers = {"lfm25": {}, "llama4_pythonic": {
        "sglang": harness.sglang_parser("pythonic_detector.PythonicDetector", TOOLS),
        "vllm": harness.vllm_parser("llama4_pythonic", TOOLS, "Llama-4")}}
    for family in CALLS:
        if family in toolwire.formats():
            harness.stream_table(f"{family}, one content string value", outputs(family), family, TOOLS,
                                 peers[family])
            if peers[family]:
                harness.stream_table(f"{family}, one plain string value", outputs(family, PLAIN_UNIT), family,
                                     TOOLS, peers[family])
    if "lfm25" in toolwire.formats():
        harness.stream_table("lfm25, a list of strings", list_output, "lfm25", TOOLS, {})


if __name__ == "__main__":
    print(harness.environment())
    main()
