"""What the fuzz suite knows about each format, beyond the Format itself.

Markers come from each Format's own ``markers`` table; the family's syntax pieces (JSON punctuation, XML
tags, attribute spellings, header words) are listed here because no table holds them. The sentinel alphabet
is derived: characters of the fuzz alphabet that occur in no marker, syntax piece or stop token of any
family, so a parser has no reason ever to consume one.
"""

from __future__ import annotations

import json
from functools import cache

import toolwire
from toolwire.families import declared

GROUP_OF_MODULE = {  # parser module -> family group (the three fixing helpers' split, plus the JSON group)
    "hermes_json": "JSON", "kimi": "JSON", "deepseek_legacy": "JSON", "mistral": "JSON", "llama": "JSON",
    "qwen_xml": "XML", "seed_oss": "XML", "glm": "XML", "minimax": "XML",
    "dsml": "DSML+harmony", "harmony": "DSML+harmony", "gigachat": "DSML+harmony",
    "hermes3": "JSON", "granite": "JSON", "qwen38": "XML",  # parser modules split off hermes_json / qwen_xml
    "llama4": "JSON", "ministral": "JSON",
    "nemotron": "XML", "step35": "XML", "laguna": "XML", "hy3": "XML",
    "gemma": "XML", "minimax_m3": "XML", "kimi_k3": "XML",
    "lfm25": "pythonic", "llama4_pythonic": "pythonic",
}

JSON_SYNTAX = ['{', '}', '[', ']', '"', ':', ',', '\\', '\\"', '\\n', '\\u00e9', '\\ud83d\\ude00', '\\x', 'null',
               'true', 'false', '1.50', '-0', '1e400', '123456789012345678901234', '"name"', '"arguments"',
               '"parameters"', '{"name": "', '", "arguments": ', '", "parameters": ', '{"city": "Paris"}', '{}',
               '"city": ', '"Paris"', ',}', '```json\n', '\n```', "'", 'NaN']
XML_SYNTAX = ['<', '>', '</', '=', '"', '">', '/>', '&lt;', '&amp;', '<![CDATA[', ']]>', 'name="', '<function=',
              '<parameter=', '</function>', '</parameter>', '<invoke name="', '<parameter name="', '</invoke>',
              '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>']
# Python call syntax (the pythonic engine) and its adversarial pieces: names and expressions that must never be
# evaluated, unterminated strings, huge numbers, deep nesting, escapes.
PYTHONIC_SYNTAX = ['[', ']', '(', ')', '=', ',', "'", '"', '{', '}', ':', '\\', "\\'", '\\n', '\\x41', '\\u00e9',
                   '\\N{BULLET}', 'True', 'False', 'None', 'true', 'null', '1.5e-07', '-0.5', '1e400', '0x1F', '1_000',
                   '007', '12345678901234567890', 'get_weather(', 'search_papers(', 'city=', 'days=', 'query=',
                   "city='", '"Paris"', "'Paris'", "__import__('os')", 'os.system', '1 + 2', '(1,)', '[[[[', ']]]]',
                   "{'a': 1}", '{"a": [1, 2]}', "'), ", "')]", ", days=", ')]', '), ', 'lambda: 0', '*args']
# Drift pieces (issue 33): shapes a model writes when it drifts from a JSON-bodied format - a call object at a line
# start before an orphan closer, Qwen3-Coder's <function=NAME> tag, a Python call, "function=NAME" keys, other
# arguments keys, a blank-padded name, a string left open before the closing braces.
JSON_DRIFT = ['\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', "\n{", "</tool_call>",
              '<function=get_weather>', '<function get_weather>', '</function>',
              '<parameter=city>\nParis\n</parameter>',
              'get_weather(city="Paris")', "search_papers(query='x', limit=2)", '{"function=get_weather": ',
              '"function=get_weather"', '"args": ', '"input": ', '{"name": "get_weather ", "arguments": ',
              '"Paris}}', '{"city": "Paris}',
              # second round: the name as the only key, arguments beside the name, the name glued to the first key,
              # a value quoted with the wrong quote
              '{"get_weather": {', '{"name": "get_weather", "city": ', '"get_weather_city": ',
              '{"name": "get_weathercity": ', "'Paris\"", "\"Paris', ", "': "]
# Drift pieces (issue 33, docs/variants.md "Drift recovery"): shapes models write that the XML parsers recover
# only when the declared tools make them unambiguous - a call without its opener, <function NAME>, attribute-style
# parameters, a JSON body, names with trailing whitespace or glued to their first key, borrowed key names.
XML_DRIFT = ['<function get_weather>', '<function ', '<function=get_weather>', '<function=get_weather >',
             '<parameter name="city">', '<parameter name="', '{"city": "Paris"}', '{"city": "Paris", "days": 2}',
             '</tool_call>', 'get_weathercity</arg_key>', 'get_weather \n', 'get_weathercity',
             '<invoke name="get_weather">', '</minimax:tool_call>', '"args": ', '"parameters": ',
             'get_weather</arg_value>', '{"name": "get_weather", "args": {"city": "Paris"}}',
             # a Python call in the wrapper; tag words whose angle brackets were lost (Qwen style, GLM style)
             'get_weather(city="Paris")', "get_weather(city='Paris', days=2)", 'get_weather(\n',
             '\nfunction=get_weather>\n', 'parameter=city>\nParis\n/parameter>\n', '/function>', 'function=',
             'tool_call>', '/tool_call>', '\ntool_call>get_weather', 'arg_key>city/arg_key>',
             'arg_value>Paris/arg_value>', 'arg_key>', '/arg_value>']
XML_SYNTAX = XML_SYNTAX + XML_DRIFT
FAMILY_SYNTAX = {
    "hermes_json": JSON_SYNTAX + JSON_DRIFT,
    "kimi": JSON_SYNTAX + ["functions.", ":0", ":1", ":", "get_weather:0", "functions.get_weather:0", "invalid.0",
                           "functionsget_weather0", "functions_get_weather_1", "functionsget_weather:2",
                           # stripped special tokens; a wrong quote (issue 33, second round)
                           "\nfunctions.get_weather:0{", "functions.get_weather:1{", "{\"city\": 'Paris\"}",
                           "\"Paris', "],
    "deepseek_legacy": JSON_SYNTAX + ["function", "function<｜tool▁sep｜>"],
    "mistral": JSON_SYNTAX + ["abcdefghi", "[TOOL_CALLS][", "[TOOL_CALLS] [", "[TOOL_CALLS]get_weather{",
                              '[TOOL_CALLS]{"name": "get_weather", "arguments": ', '"Paris}[TOOL_CALLS]',
                              '\nget_weather{"city": ', 'get_weather{', '[TOOL_CALLS]{"get_weather": {',
                              '[TOOL_CALLS]{"name": "get_weather", "city": ', "\"Paris', "],
    "llama": JSON_SYNTAX + [".call(", ")", "=", ";", "brave_search", "wolfram_alpha", "code_interpreter",
                            '{"get_weather": {"city": ', '{"name": "get_weather", "city": ', '{"get_weather_city": '],
    "qwen_xml": XML_SYNTAX + ["\n"],
    "seed_oss": XML_SYNTAX + ["\n"],
    "glm": XML_SYNTAX + ["\n"],
    "minimax": XML_SYNTAX + ["\n"],
    "dsml": XML_SYNTAX + ['" string="true">', '" string="false">', ' string="true"', ' string="false"', "\n\n",
                         "｜DSML｜", "<｜DSML｜", "</｜DSML｜", "｜｜DSML｜｜", "‖DSML‖", "|DSML|", "<|DSML|invoke name=\""],
    "hermes3": JSON_SYNTAX + JSON_DRIFT,
    "granite": JSON_SYNTAX + JSON_DRIFT,
    "qwen38": XML_SYNTAX + ["\n"],
    "gigachat": XML_SYNTAX + ['" string="true">', '" string="false">', ' string="true"', ' string="false"', "\n\n",
                             "｜GCML｜", "<｜GCML｜", "</｜GCML｜", "｜DSML｜", "<｜GCML｜invoke name=\"",
                             "</think>\n\n", "assistant<|role_sep|>\n", "function result",
                             # the markup with ｜GCML｜ dropped by a detokenizer: read from text (missing_call_wrapper)
                             "<tool_calls>", "</tool_calls>", "<invoke name=\"", "</invoke>", "<parameter name=\"",
                             "</parameter>"],
    "llama4": JSON_SYNTAX + ["<|python_start|>", "<|python_end|>"],
    "ministral": JSON_SYNTAX + ["[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]", "[TOOL_CALLS]get_weather{",
                                '[TOOL_CALLS]{"name": "get_weather", "arguments": '],
    "nemotron": XML_SYNTAX + ["\n", "True", "False", "None"],
    "step35": XML_SYNTAX + ["\n"],
    "laguna": XML_SYNTAX + ["\n"],
    "hy3": XML_SYNTAX + ["\n", ":opensource>", "<arg_key:opensource>", "<arg_value:opensource>"],
    "gemma": ["call:", "{", "}", ":", ",", '<|"|>', "[", "]", "true", "false", "null", "<|channel>thought", "\n",
              "call:get_weather{", "city:Paris", "<tool_call|>"],  # drift: a call without <|tool_call>
    "minimax_m3": XML_SYNTAX + ["\n", "]<]minimax[>[", "<tool_call>", "</tool_call>"],
    "kimi_k3": XML_SYNTAX + ["\n", "<|open|>", "<|sep|>", "<|close|>", "think", "response", "tools", "call",
                             "argument", "message", "tool=", "index=", "key=", "type=", "name="],
    "lfm25": PYTHONIC_SYNTAX,
    "llama4_pythonic": PYTHONIC_SYNTAX,
    "harmony": ["assistant", "analysis", "commentary", "final", " to=functions.", "to=functions.", "to=", " json",
                "json", "functions.", "<|constrain|>json", " <|constrain|>json", "user", "tool", "system",
                "developer", " ", "<|channel|>final<|message|>", "<|channel|>analysis<|message|>",
                "<|start|>assistant"] + JSON_SYNTAX,
}
# End-of-turn tokens a model may leave at the end of its output (any family may strip its own): every declared
# family's stop tokens (toolwire/families/), so a new family's are fuzzed without an edit here.
STOP_TOKENS = sorted({t for family in declared().values() for t in family.stop_tokens})
# Reasoning markers every family could meet (its own come from its table).
REASONING_MARKERS = ["<think>", "</think>", "<seed:think>", "</seed:think>"]
# Characters that frame JSON and markup: counted loosely (templates add and parsers trim them around blocks).
FRAMING_WHITESPACE = " \t\n\r"
# Non-ASCII and control whitespace: never framing in any family, so it must survive like any text.
ODD_WHITESPACE = "\u3000\u00a0\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029\u2003\u200b\ufeff"
# Ordinary text the strategies draw from, besides markers and syntax (U+2581 is SentencePiece's space mark, and
# DeepSeek's markers spell it).
PLAIN_ALPHABET = ("abcxyzPQ0123456789 .,!?-_" + ODD_WHITESPACE + "\x00\x01\x07\x1b\x7f"
                  + "Жé中ß😀𝔘\u0301ÿ∑\u2581")
# Numbers outside the JSON grammar (issue 33 N1/N2): a leading zero (a month, a time-zone offset), a bare sign or
# dot, an exponent cut short, hex, a unit glued on, constants JSON lacks, a full-width digit.
NOT_JSON_NUMBERS = ["-01", "01", "00", "-00.5", "007", "+1", ".5", "1.", "1e", "1e+", "-", "-.5", "0x1F", "12px",
                    "1.5.2", "NaN", "-Infinity", "\uff11"]


@cache
def reasoning_pair(name: str) -> tuple[str, str]:
    """The format's reasoning opener and closer as its declaration writes them (``("", "")`` without a reasoning
    block)."""
    return toolwire.get_format(name).family.reasoning or ("", "")


@cache
def openers(name: str) -> tuple[str, ...]:
    """The format's markers that open something a parser reads up to a bound (a call, an invoke, a tag, a
    section, a block, reasoning), by their names in its ``markers`` table."""
    table = toolwire.get_format(name).markers
    found = {m for key, m in table.items() if m and not any(w in key for w in ("response", "result", "output", "close",
                                                                              "end"))
             and (key in ("open", "ns") or any(w in key for w in ("call", "invoke", "function", "python", "header",
                                                                    "block", "channel", "start", "section")))}
    return tuple(sorted(found)) or markers(name)


@cache
def overlaps(name: str) -> tuple[str, ...]:
    """Two of the format's markers or stop tokens written so that the end of one is the start of the other
    (``]<]minimax[>[e~[``): a tokenizer reads the first whole, so the second is text (issue 33 N7)."""
    spellings = set(markers(name)) | set(STOP_TOKENS)
    found = {a + b[k:] for a in spellings for b in spellings if a != b
             for k in range(1, min(len(a), len(b))) if a.endswith(b[:k])}
    return tuple(sorted(found))


@cache
def limits() -> tuple[int, ...]:
    """The parsers' bounds on the text of a header, tag or call head (characters): the fuzz inputs cross each
    one, so that a limit met at a different character one feed and one character at a time shows (N3-N5)."""
    from toolwire.parsers import gemma, harmony, kimi_k3, llama, minimax_m3
    from toolwire.parsers.engine import dsml, marker_json, xml_calls, xml_tool

    return tuple(sorted({dsml.MAX_HEADER, gemma.MAX_HEADER_CHARS, harmony.MAX_HEADER_CHARS, kimi_k3.MAX_TAG_CHARS,
                         llama.MAX_PREFIX_CHARS, marker_json.MAX_HEADER_CHARS, minimax_m3.MAX_TAG_CHARS,
                         xml_tool.MAX_NAME_CHARS, xml_calls.MAX_HEAD_CHARS}))


HELD_BACK_LIMIT = 640
"""The most text a stream parser may hold in its buffer between deltas: a possible marker, or a bounded header or
tag (DSML's 512-character one is the longest held there); a long run of anything (N8: blanks after
``<|python_start|>``) must stream on, not wait in the buffer to be scanned again at every delta."""

# The golden tools (declared in ../shared/golden parse vectors), and the calls the strategies write.
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather for a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {
         "type": "string", "enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "search_papers", "description": "Search papers.",
     "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"},
                    "filters": {"type": "object"}, "tags": {"type": "array", "items": {"type": "string"}}}}}},
]
TOOL_NAMES = ["get_weather", "search_papers", "unknown_tool", "get_weatherЖ", "", "functions.get_weather", "0"]


def format_names() -> list[str]:
    return sorted(toolwire.formats())


def parser_module(name: str) -> str:
    return toolwire.get_format(name).parser_class.__module__.rsplit(".", 1)[-1]


def group(name: str) -> str:
    """The family group a format's parser belongs to: ``JSON``, ``XML`` or ``DSML+harmony``."""
    return GROUP_OF_MODULE[parser_module(name)]


@cache
def markers(name: str) -> tuple[str, ...]:
    """The format's own marker spellings (its ``markers`` table), longest first."""
    found = {m for m in toolwire.get_format(name).markers.values() if m}
    return tuple(sorted(found, key=lambda m: (-len(m), m)))


@cache
def syntax(name: str) -> tuple[str, ...]:
    return tuple(FAMILY_SYNTAX[parser_module(name)])


@cache
def consumable(name: str) -> tuple[str, ...]:
    """Every spelling the format's parser may consume without keeping it: its markers, its family's syntax,
    stop tokens and reasoning markers (longest first)."""
    found = set(markers(name)) | set(syntax(name)) | set(STOP_TOKENS) | set(REASONING_MARKERS)
    return tuple(sorted(found, key=lambda m: (-len(m), m)))


@cache
def all_spellings() -> frozenset[str]:
    """Every marker, syntax piece and stop token of every family."""
    found: set[str] = set(STOP_TOKENS) | set(REASONING_MARKERS)
    for name in format_names():
        found |= set(markers(name)) | set(syntax(name))
    return frozenset(found)


@cache
def sentinels() -> frozenset[str]:
    """Characters of the fuzz alphabet in no spelling of any family (nor framing whitespace): every one in
    the input must be somewhere in the result, as often."""
    used = set("".join(all_spellings())) | set(FRAMING_WHITESPACE)
    return frozenset(ch for ch in PLAIN_ALPHABET if ch not in used)


@cache
def other_markers(name: str) -> tuple[str, ...]:
    """Markers of the other families (text for this one)."""
    own = set(markers(name))
    return tuple(sorted({m for n in format_names() for m in markers(n)} - own))


@cache
def seed_outputs(name: str) -> tuple[tuple[str, bool], ...]:
    """Well-formed outputs of the format from ../shared/golden/parse, as ``(model_output, thinking)``, plus
    one the fuzz suite writes from the format's renderer (so a format with no vectors still has seeds)."""
    from support import golden, golden_parse_kwargs

    rows = golden("parse", name)
    seeds = [(r["model_output"], golden_parse_kwargs(r)["thinking"]) for r in rows]
    return tuple(dict.fromkeys(seeds)) + rendered_seeds(name)


@cache
def rendered_seeds(name: str) -> tuple[tuple[str, bool], ...]:
    """An assistant turn with reasoning, content and two calls, rendered as history: the part after the
    generation prompt (for formats whose render has that prefix)."""
    fmt = toolwire.get_format(name)
    calls = [{"id": "abcdefgh1", "type": "function", "function": {"name": "get_weather",
              "arguments": json.dumps({"city": "Paris Ж", "days": 3}, ensure_ascii=False)}},
             {"id": "abcdefgh2", "type": "function", "function": {"name": "search_papers",
              "arguments": json.dumps({"query": "a\nb 😀", "limit": 2, "tags": ["x"], "filters": {"y": None}},
                                      ensure_ascii=False)}}]
    out = []
    for thinking in (False, True):
        turn = {"role": "assistant", "content": "Checking é.", "tool_calls": calls}
        if thinking:
            turn["reasoning_content"] = "Need two tools."
        history = [{"role": "user", "content": "hi"}]
        try:
            head = fmt.render(history, TOOLS, thinking=thinking)
            full = fmt.render(history + [turn], TOOLS, thinking=thinking, add_generation_prompt=False).text
        except Exception:  # noqa: BLE001 - a format that refuses this turn has no rendered seed
            continue
        if full.startswith(head.text):
            out.append((full[len(head.text):], head.opens_reasoning))
    return tuple(out)
