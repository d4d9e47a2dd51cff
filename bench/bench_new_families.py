"""Qwen3.8, Nemotron 3, Step 3.5, Laguna, Hy3, GLM-5.3 and GigaChat 3.5 streaming: per-delta cost while one ``write_file`` string
argument grows to 1k..64k characters, in each family's own call syntax (timing: :mod:`bench.harness`).

The value is code-like text with newlines, ``<`` and near-miss closing tags. Target: toolwire's per-delta cost
at 64k is at most 2x its cost at 1k.
"""

from __future__ import annotations

from bench import harness

TOOLS = [{"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"]}}}]
_QWEN_XML = ("<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n<parameter=content>\n",
             "\n</parameter>\n</function>\n</tool_call>")
CALLS = {  # family -> (text before the value, text after it)
    "qwen38": _QWEN_XML,
    "nemotron3": _QWEN_XML,
    "step35": _QWEN_XML,
    "laguna": ("<tool_call>write_file<arg_key>path</arg_key><arg_value>a.py</arg_value><arg_key>content</arg_key>"
               "<arg_value>", "</arg_value></tool_call>"),
    "hy3": ("<tool_calls:opensource><tool_call:opensource>write_file<tool_sep:opensource><arg_key:opensource>path"
            "</arg_key:opensource><arg_value:opensource>a.py</arg_value:opensource><arg_key:opensource>content"
            "</arg_key:opensource><arg_value:opensource>",
            "</arg_value:opensource></tool_call:opensource></tool_calls:opensource>"),
    "glm53": ("<tool_call>write_file<arg_key>path</arg_key><arg_value>a.py</arg_value><arg_key>content</arg_key>"
              "<arg_value>", "</arg_value></tool_call>"),
    "gigachat35": ('<｜GCML｜tool_calls>\n<｜GCML｜invoke name="write_file">\n<｜GCML｜parameter name="path" '
                   'string="true">a.py</｜GCML｜parameter>\n<｜GCML｜parameter name="content" string="true">',
                   "</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>"),
}


def outputs(family: str):
    head, tail = CALLS[family]

    def output(size: int) -> tuple[str, dict, int]:
        unit = "    if a < b and c </par> d:\n        print('</parameter x', \"\u00e9\")\n"
        value = (unit * (size // len(unit) + 1))[:size]
        return head + value + tail, {"path": "a.py", "content": value}, len(head)

    return output


def main() -> None:
    """Print one table per family (toolwire only)."""
    import toolwire

    for family in CALLS:
        if family in toolwire.formats():
            harness.stream_table(f"{family}, one content string value", outputs(family), family, TOOLS, {})


if __name__ == "__main__":
    print(harness.environment())
    main()
