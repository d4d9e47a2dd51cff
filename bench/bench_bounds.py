"""CPU seconds of the inputs that once hung, recursed or crawled, against the bound each was fixed to.

The tests (tests/core/test_limits.py, tests/formats/test_format_limits.py, tests/tokens/test_token_input.py,
tests/dispatch/test_schema_guard.py) check what these inputs give; how long they take is measured here, so that
no test verdict depends on how busy the machine is.
Run: ``.venv/bin/python -m bench bounds``. One table: CPU seconds of this thread per case and the bound the tests
used to assert (a case above its bound is a regression to look at, on a quiet machine).
"""

from __future__ import annotations

import time

from bench import harness

MB50 = 50 * 1024 * 1024
TOOLS = [{"type": "function", "function": {"name": "echo", "parameters": {
    "type": "object", "properties": {"text": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "store", "parameters": {"type": "object"}}}]
DSML = "\uff5cDSML\uff5c"


def _cpu(fn) -> float:
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def _deep(depth: int, leaf="x"):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def _json_limits() -> list[tuple[str, float, float]]:
    from toolwire.parsers.engine.safe_json import JsonTooDeep, loads, nesting_depth

    rows = []
    for label, text in [("one huge string", '{"a": "' + 'x\\"[{' * (MB50 // 5) + '"}'),
                        ("many flat arrays", "[]" * (MB50 // 2)),
                        ("many small nests", "[[1],{\"a\":[2]}]," * (MB50 // 16)),
                        ("unterminated string of escapes", '"' + '\\"[' * (MB50 // 3)),
                        ("closers then openers", "]" * (MB50 // 2) + "[" * (MB50 // 2))]:
        rows.append((f"nesting_depth, 50 MB: {label}", _cpu(lambda: nesting_depth(text, 64)), 10.0))

    def deep_loads():
        try:
            loads('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
        except JsonTooDeep:
            pass
    rows.append(("safe_json.loads refuses 100k-deep nesting", _cpu(deep_loads), 2.0))
    return rows


def _outputs() -> list[tuple[str, float, float]]:
    import toolwire
    from toolwire.output import ParsedOutput, ToolCallCandidate

    qwen = toolwire.get_format("qwen25")
    rows = []
    big = '<tool_call>\n{"name": "echo", "arguments": {"text": "' + "x" * MB50 + '"}}\n</tool_call>'
    rows.append(("qwen25: a 50 MB call, parsed and validated", _cpu(lambda: qwen.parse(big, TOOLS).validate(TOOLS)),
                 30.0))
    deep = '<tool_call>\n{"name": "store", "arguments": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}\n</tool_call>"
    rows.append(("qwen25: arguments nested 100k deep, parsed and validated",
                 _cpu(lambda: qwen.parse(deep, TOOLS).validate(TOOLS)), 10.0))
    made = ParsedOutput(tool_calls=[ToolCallCandidate(index=0, id="c", name="store", arguments={"a": _deep(100_000)})])
    rows.append(("hand-made arguments nested 100k deep, validated", _cpu(lambda: made.validate(TOOLS)), 10.0))
    v4 = toolwire.get_format("deepseek_v4")
    dsml = (f'\n\n<{DSML}tool_calls>\n<{DSML}invoke name="echo">\n<{DSML}parameter name="text" string="true">'
            + "z" * MB50 + f"</{DSML}parameter>\n</{DSML}invoke>\n</{DSML}tool_calls>")
    rows.append(("deepseek_v4: a 50 MB DSML call, parsed and validated",
                 _cpu(lambda: v4.parse(dsml, TOOLS).validate(TOOLS)), 60.0))
    return rows


def _marker_text_as_ids() -> list[tuple[str, float, float]]:
    import toolwire
    from toolwire.tokenize import load_tokenizer, vocabulary

    folder = harness.TOKENIZERS / "DeepSeek-V3"
    if not folder.is_dir() or harness.optional_import("tokenizers") is None:
        return []
    tok = load_tokenizer(str(folder))
    fmt = toolwire.get_format("deepseek_v4")
    text = "see <｜DSML｜tool_calls> and \n\n<｜DSML｜invoke name=\"x\"> " * 2000
    ids = vocabulary(tok).encode_plain(text)

    def feed():
        parser = fmt.stream(tokenizer=tok)
        for i in range(0, len(ids), 7):
            parser.feed(ids=ids[i:i + 7])
        parser.finish()
    return [("deepseek_v4 ids: marker text from ordinary tokens, 7 ids per delta", _cpu(feed), 10.0)]


def _schema_guard() -> list[tuple[str, float, float]]:
    from toolwire import ParsedOutput, ToolCallCandidate, ToolSet

    def check(schema, arguments, **options):
        call = ToolCallCandidate(index=0, id="c0", name="f", arguments=arguments, raw_arguments="{}")
        tools = ToolSet([{"type": "function", "function": {"name": "f", "parameters": schema}}], **options)
        return ParsedOutput(tool_calls=[call]).validate(tools)

    cases = {
        "pattern ^(a+)+$ on 30 a + !": ({"type": "object", "properties": {"a": {"type": "string",
                                                                              "pattern": "^(a+)+$"}}},
                                        {"a": "a" * 30 + "!"}),
        "pattern ^(a\\|aa)+$ on 40 a + !": ({"type": "object", "properties": {"a": {"type": "string",
                                                                                 "pattern": "^(a|aa)+$"}}},
                                           {"a": "a" * 40 + "!"}),
        "patternProperties ^(a\\|aa)+$": ({"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "string"}},
                                           "additionalProperties": False}, {"a" * 40 + "!": "x"}),
        "propertyNames ^(a\\|aa)+$": ({"type": "object", "propertyNames": {"pattern": "^(a|aa)+$"}},
                                      {"a" * 40 + "!": 1}),
    }
    rows = [(f"schema: {label}, formats off and on",
             _cpu(lambda: [check(schema, arguments, formats=f) for f in (False, True)]), 5.0)
            for label, (schema, arguments) in cases.items()]
    options = ["v" * 200 + str(i) for i in range(20_000)]
    rows.append(("schema: did you mean, enum of 20,000 long strings",
                 _cpu(lambda: check({"type": "object", "properties": {"a": {"enum": options}}}, {"a": "v" * 199})),
                 3.0))
    return rows


def _drift() -> list[tuple[str, float, float]]:
    """Drift shapes (issue 33) repeated to about 1 MB, streamed in 7-character deltas with the tool declared: the
    recoveries' readings must stay linear (a lazy regex per unclosed ``<parameter`` once made 8,000 of them take
    10.9 s; an unclosed string once tried every closing brace of its run)."""
    import toolwire

    tool = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    n = 60_000
    shapes = [("qwen3", "Qwen3-Coder tags in <tool_call>, no </parameter>",
               "<tool_call>\n<function=get_weather>" + "<parameter=a>x" * n + "\n</tool_call>"),
              ("qwen3", "an unclosed string before a run of braces",
               '<tool_call>{"name": "get_weather", "arguments": {"city": "' + "}" * (8 * n) + "\n</tool_call>"),
              ("qwen3", "a Python call with many keywords", "<tool_call>get_weather(" + "city='x', " * n + ")</tool_call>"),
              ("qwen3", "call objects at line starts, one orphan closer", '{"name": "get_weather"}\n' * n + "</tool_call>"),
              ("qwen3_coder", "<function NAME> openers without a wrapper", "<function get_weather>" * n),
              ("glm47", "a name glued to many keys", "<tool_call>get_weather" + "city</arg_key>" * n),
              ("minimax_m2", "<invoke> openers without their block", '<invoke name="get_weather">' * n),
              ("gemma4", "call: openers with the tokens stripped", "call:get_weather{" * n),
              ("mistral_small32", "calls without [ARGS], strings left open", '[TOOL_CALLS]get_weather{"city": "x}' * n)]
    rows = []
    for family, label, text in shapes:
        fmt = toolwire.get_format(family)

        def run(fmt=fmt, text=text):
            stream = fmt.stream(tool, thinking=False)
            for i in range(0, len(text), 7):
                stream.feed(text[i:i + 7])
            stream.finish()
        rows.append((f"drift, {family}, {len(text) // 1000} kB: {label}", _cpu(run), 10.0))
    return rows


def main() -> None:
    """Print the table and record the case closest to its bound."""
    rows = _json_limits() + _outputs() + _marker_text_as_ids() + _drift()
    if harness.optional_import("jsonschema") is not None:
        rows += _schema_guard()
    print("\ninputs that once hung or crawled (CPU seconds of this thread; the bound the tests held them to)\n")
    harness.print_table(["case", "CPU s", "bound s", "share of bound"],
                        [[label, f"{cost:.2f}", f"{bound:.0f}", f"{cost / bound:.0%}"] for label, cost, bound in rows],
                        align="lrrr")
    label, cost, bound = max(rows, key=lambda r: r[1] / r[2])
    harness.record("bounds", f"closest to its bound: {label}, CPU s", f"{cost:.2f}", "bound", f"{bound:.0f}",
                   f"{bound / cost:.1f}x under" if cost else "-")


if __name__ == "__main__":
    print(harness.environment())
    main()
