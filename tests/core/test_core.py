"""Core API: registry, errors, request models, prompt segments, the shared lexer and safe JSON."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

import toolwire
from toolwire.errors import InvalidRequest, ToolwireError, UnknownFormat
from toolwire.models import call_arguments, normalize_messages, normalize_tools
from toolwire.parsers.engine.lexer import MarkerScanner, held_back_prefix
from toolwire.parsers.engine.safe_json import JsonTooDeep, loads
from toolwire.prompt import PromptBuilder


def test_formats_are_sorted_unique_and_loadable():
    names = toolwire.formats()
    assert names == sorted(set(names))
    for name in names:
        fmt = toolwire.get_format(name)
        assert fmt.name == name
        assert toolwire.get_format(name) is fmt  # one instance per name


def test_every_family_module_present_imports():
    from toolwire import registry

    toolwire.formats()
    assert registry.IMPORT_ERRORS == {}


def test_unknown_format_names_closest_known():
    if "deepseek_v4" not in toolwire.formats():
        pytest.skip("deepseek_v4 not built")
    with pytest.raises(UnknownFormat) as exc:
        toolwire.get_format("deepseek-v4")
    assert exc.value.code == "unknown_format"
    assert "deepseek_v4" in exc.value.closest
    assert "did you mean" in str(exc.value)
    assert isinstance(exc.value, ToolwireError)


def test_error_codes_are_stable_and_distinct():
    from toolwire import errors

    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, ToolwireError)]
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes))
    assert all(c.code.islower() for c in classes)


def test_invalid_message_names_index_and_field():
    with pytest.raises(InvalidRequest) as exc:
        normalize_messages([{"role": "user", "content": "hi"}, {"content": "no role"}])
    assert exc.value.message_index == 1
    assert exc.value.field == "role"
    assert str(exc.value).startswith("messages[1].role:")


def test_invalid_tool_call_arguments_name_the_call():
    msgs = normalize_messages([{"role": "assistant", "tool_calls": [
        {"id": "a", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "function": {"name": "g", "arguments": "{bad"}}]}])
    assert call_arguments(msgs[0].tool_calls[0], 0, 0) == {}
    with pytest.raises(InvalidRequest) as exc:
        call_arguments(msgs[0].tool_calls[1], 0, 1)
    assert exc.value.field == "tool_calls[1].function.arguments"


def test_arguments_as_object_keep_order_and_big_ints():
    big = 2**70
    msgs = normalize_messages([{"role": "assistant", "tool_calls": [
        {"function": {"name": "f", "arguments": {"z": 1, "a": big}}}]}])
    args = call_arguments(msgs[0].tool_calls[0], 0, 0)
    assert list(args) == ["z", "a"] and args["a"] == big


def test_tools_keep_original_function_dict():
    fn = {"name": "f", "parameters": {"type": "object"}, "description": "d", "strict": True}
    tool = normalize_tools([{"type": "function", "function": fn}])[0]
    from toolwire.models import function_to_dict

    assert list(function_to_dict(tool)) == ["name", "parameters", "description", "strict"]
    with pytest.raises(InvalidRequest) as exc:
        normalize_tools([{"type": "function", "function": {"description": "no name"}}])
    assert "tools[0]" in exc.value.field


def test_models_are_accepted_like_dicts():
    m = toolwire.Message(role="user", content=[toolwire.ContentPart(text="a"), toolwire.ContentPart(text="b")])
    assert normalize_messages([m])[0].text() == "a\n\nb"


@given(st.lists(st.tuples(st.sampled_from(["special", "template", "content"]), st.text(max_size=5),
                          st.sampled_from([None, 0, 1])), max_size=20))
def test_segments_concatenate_to_text(pieces):
    b = PromptBuilder()
    for kind, text, idx in pieces:
        b.add(kind, text, idx)
    p = b.build()
    assert "".join(s.text for s in p.segments) == p.text == "".join(t for _, t, _ in pieces)
    assert all(s.text for s in p.segments)


def test_special_segments_are_never_merged():
    p = PromptBuilder().special("<a>").special("<b>").content("x").content("y").build()
    assert [s.kind for s in p.segments] == ["special", "special", "content"]
    assert p.special_markers() == ["<a>", "<b>"]


# ---- lexer

def test_scanner_holds_back_only_a_marker_prefix():
    sc = MarkerScanner(["</think>", "<tool_call>"])
    assert sc.scan("hello </thi") == (6, None)
    assert sc.scan("hello </thi", final=True) == (11, None)
    assert sc.scan("a<tool_call>b</think>") == (1, "<tool_call>")
    assert sc.scan("a < b") == (5, None)


def test_scanner_waits_when_a_longer_marker_may_follow():
    sc = MarkerScanner(["</think>", "</think>\n\n"])
    assert sc.scan("x</think>\n") == (1, None)
    assert sc.scan("x</think>\n\n") == (1, "</think>\n\n")
    assert sc.scan("x</think>\ny") == (1, "</think>")
    assert sc.scan("x</think>", final=True) == (1, "</think>")


@given(st.text(alphabet="ab<>/tk", max_size=30))
def test_scanner_agrees_with_str_find(text):
    markers = ["<tk>", "</tk>", "<b>"]
    sc = MarkerScanner(markers)
    hit = sc.scan(text, final=True)
    found = [(text.find(m), -len(m), m) for m in markers if m in text]
    if found:
        pos, _, m = min(found)
        assert (hit.start, hit.marker) == (pos, m)
    else:
        assert hit == (len(text), None)


def test_held_back_prefix():
    assert held_back_prefix("abc</", "</x>") == 2
    assert held_back_prefix("abc", "</x>") == 0


# ---- safe json

def test_safe_json_exact_ints_and_depth_limit():
    assert loads("[123456789012345678901234567890]") == [123456789012345678901234567890]
    with pytest.raises(JsonTooDeep):
        loads("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError):
        loads("[NaN]")
    assert loads(json.dumps({"s": "[[[[" * 100})) == {"s": "[[[[" * 100}


def test_core_import_stays_light():
    import subprocess
    import sys

    code = ("import sys, toolwire; toolwire.get_format('deepseek_v4').render([{'role': 'user', 'content': 'x'}]); "
            "print(sorted(m for m in ('transformers', 'tokenizers', 'jsonschema', 'lxml', 'tiktoken', 'torch') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_unknown_parse_option_is_a_clear_error():
    from toolwire.errors import InvalidOption

    for name in toolwire.formats():  # render options (current_date ...) are ignored by parse; a typo is not
        with pytest.raises(InvalidOption, match="current_dat"):
            toolwire.get_format(name).parse("hi", current_dat="2025-01-01")
