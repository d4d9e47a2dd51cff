"""The render speed paths of issue 18 give exactly what the plain paths give.

* the frozen dataclasses a render builds (options, prompt, context plan pieces) hold the fields given, field for
  field and in field order;
* ``tojson`` (one reused C encoder) writes what ``json.dumps(ensure_ascii=False)`` writes, and raises what it
  raises (a value that contains itself included);
* call arguments read by the decoder's scanner decode as ``json.loads`` decodes them, and every other text is
  still refused with ``json.loads``'s own wording;
* the message text check finds a lone surrogate inside non-ASCII text in every field, and lets valid
  non-ASCII text through;
* the call-name checks (Qwen/Hermes JSON, Qwen XML) refuse exactly the names the per-character tests refused;
* ``Context.last`` is the last matching index.
"""

from __future__ import annotations

import importlib
import json
import math

import pytest

import toolwire
from toolwire.context_policy.boundaries import Boundaries, find_boundaries
from toolwire.context_policy.policies import Context
from toolwire.errors import InvalidRequest, UnrepresentableValue
from toolwire.format import Format, RenderOptions
from toolwire.models import normalize_messages
from toolwire.request_values import _json_object, call_arguments, check_message_text
from toolwire.prompt import PromptBuilder, RenderedPrompt
from toolwire.templates.hermes_json import _check_name
from toolwire.templates.json_text import tojson
from toolwire.templates.qwen_xml import check_name as xml_check_name

plan_module = importlib.import_module("toolwire.context_policy.plan")


def same_dataclass(built, constructed) -> bool:
    return (type(built) is type(constructed) and built == constructed and repr(built) == repr(constructed)
            and list(built.__dict__) == list(constructed.__dict__))


def test_render_options_equal_the_constructed_ones():
    seen = []

    from toolwire.templates.qwen_xml import Qwen36

    class Capture(Qwen36):
        def _render(self, messages, tools, options, out):
            seen.append(options)
            out.template("x")
            return False

    Capture().render([{"role": "user", "content": "u"}], thinking=True, reasoning_effort="high",
                     current_date="2025-01-02", preserve_thinking=True, policy="keep_all")
    expected = RenderOptions(True, "high", True, True, "2025-01-02", {"preserve_thinking": True},
                             seen[0].kept_reasoning, "keep_all")
    assert same_dataclass(seen[0], expected)
    assert seen[0].keeps_reasoning(5) is False


def test_built_prompt_equals_the_constructed_one():
    out = PromptBuilder().special("<s>", None).template("role\n", 0).content("hi", 0)
    built = out.build(opens_reasoning=True, format="f")
    expected = RenderedPrompt("<s>role\nhi", (("special", "<s>", None), ("template", "role\n", 0),
                                              ("content", "hi", 0)), True, "f")
    assert same_dataclass(built, expected)
    assert built.segments == expected.segments
    with pytest.raises(AttributeError):
        built.text = "changed"  # still frozen


def test_plan_context_and_boundaries_equal_the_constructed_ones():
    msgs = normalize_messages([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                               {"role": "user", "content": "<tool_response>r</tool_response>"},
                               {"role": "assistant", "content": "c"}])
    b = find_boundaries(msgs)
    assert same_dataclass(b, Boundaries((0,), (1, 3), (0, 0, 0, 0)))
    ctx = plan_module._context(msgs, b, 1, 0, {"x": 1}, None, 1)
    assert same_dataclass(ctx, Context(msgs, b, True, False, {"x": 1}, has_tools=False, add_generation_prompt=True))


def test_context_last_is_the_last_match():
    msgs = normalize_messages([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                               {"role": "user", "content": "c"}, {"role": "tool", "content": "d"}])
    ctx = plan_module._context(msgs, find_boundaries(msgs), False, True, {}, None, True)
    assert ctx.last("user", lambda m: m.role == "user") == 2
    assert ctx.last("none", lambda m: m.role == "developer") == -1
    assert ctx.last("user", lambda m: False) == 2  # computed once per key
    assert ctx.last_of_roles(("user", "developer")) == 2
    assert ctx.last_of_roles(("tool", "user")) == 3
    assert ctx.last_of_roles(("developer",)) == -1
    msgs.pop()  # memoized: a later question under the same roles is not computed again
    assert ctx.last_of_roles(("tool", "user")) == 3


def _outcome(fn, value):
    try:
        return fn(value)
    except Exception as exc:  # noqa: BLE001 - the outcome compared is the exception itself
        return type(exc), str(exc)


def test_tojson_is_json_dumps():
    circular: list = []
    circular.append(circular)
    nested: dict = {}
    cursor = nested
    for _ in range(3000):
        cursor["a"] = {}
        cursor = cursor["a"]
    values = [{"a": [1, 2.5, None, True, "é\ud800", {"b": ()}]}, "x\n\"", 3, -0.0, math.inf, math.nan, circular,
              {1: 2, None: 3, 1.5: "f"}, {"s": {1, 2}}, {(1,): 2}, [b"x"], 10 ** 5000, nested]
    for value in values:
        assert _outcome(tojson, value) == _outcome(lambda v: json.dumps(v, ensure_ascii=False), value)


TEXTS = ['{"a": 1}', '{"a": 1} ', ' {"a": 1}', '{}', '{"a": NaN}', '{"a": [1, 2', '{"a": 1}{', '{"a": 1}x',
         '{"a": "\\ud800"}', '{"a": 1' + "0" * 5000 + "}", '{"a":' + "[" * 3000 + "]" * 3000 + "}", "[1]", '"s"', "",
         "  ", "\ufeff{}", "{'a': 1}"]


@pytest.mark.parametrize("text", TEXTS)
def test_arguments_decode_as_json_loads_decodes_them(text):
    fast = _json_object(text)
    if fast is not None:
        assert type(fast) is dict and repr(fast) == repr(json.loads(text))
    call = normalize_messages([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": text}}]}])
    try:
        expected = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):
        with pytest.raises(InvalidRequest) as refusal:  # worded by json.loads's own error, as before
            call_arguments(call[0].tool_calls[0], 0, 0)
        assert refusal.value.field == "tool_calls[0].function.arguments"
        return
    if not isinstance(expected, dict):
        with pytest.raises(InvalidRequest, match="must be a JSON object"):
            call_arguments(call[0].tool_calls[0], 0, 0)
    elif any(isinstance(v, str) and "\ud800" in v for v in expected.values()):
        with pytest.raises(UnrepresentableValue):
            call_arguments(call[0].tool_calls[0], 0, 0)
    else:
        assert repr(call_arguments(call[0].tool_calls[0], 0, 0)) == repr(expected)


@pytest.mark.parametrize("field, message", [
    ("content", {"role": "user", "content": "Zürich \ud800"}),
    ("reasoning_content", {"role": "assistant", "content": "é", "reasoning_content": "é\udfff"}),
    ("name", {"role": "user", "content": "é", "name": "n\ud800é"}),
    ("tool_call_id", {"role": "tool", "content": "°C", "tool_call_id": "é\ud800"}),
    ("tool_calls[0].function.name", {"role": "assistant", "tool_calls": [{"function": {"name": "é\ud800"}}]}),
    ("tool_calls[0].id", {"role": "assistant", "tool_calls": [{"id": "é\ud800", "function": {"name": "f"}}]}),
    ("tool_calls[0].function.arguments",
     {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": '{"a": "é\ud800"}'}}]}),
])
def test_a_surrogate_in_non_ascii_text_is_refused(field, message):
    msgs = normalize_messages([{"role": "user", "content": "ok é"}, message])
    with pytest.raises(UnrepresentableValue) as refusal:
        check_message_text(msgs)
    assert (refusal.value.message_index, refusal.value.field) == (1, field)


def test_valid_non_ascii_text_passes_the_check():
    check_message_text(normalize_messages([
        {"role": "user", "content": "It is 10 °C in Zürich 😀", "name": "é"},
        {"role": "assistant", "content": "ok", "reasoning_content": "ü",
         "tool_calls": [{"id": "é", "function": {"name": "é", "arguments": '{"a": "ß"}'}}]}]))


NAMES = ["f", "get_weather", "é", "a b", 'a"b', "a\\b", "a\nb", "a\x00", "a\x1f", "a\x7f", "<f>", "a>b", "a\rb", ""]


@pytest.mark.parametrize("name", NAMES)
def test_call_name_checks_refuse_what_the_character_tests_refused(name):
    json_refused = any(ch in name for ch in '"\\') or any(ord(ch) < 0x20 for ch in name)
    xml_refused = any(ch in name for ch in "<>\n\r")
    for check, refused in ((lambda: _check_name(name, 1, 0), json_refused),
                           (lambda: xml_check_name(name, "function name", 1, "f"), xml_refused)):
        if refused:
            with pytest.raises(UnrepresentableValue):
                check()
        else:
            check()


def test_a_non_ascii_request_renders_as_before_in_every_json_family():
    messages = [{"role": "user", "content": "Zürich?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"city": "Zürich"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "10 °C"}]
    for name in ("qwen25", "qwen3", "llama4", "llama31"):
        text = toolwire.get_format(name).render(messages).text
        assert '"city": "Zürich"' in text and "10 °C" in text
