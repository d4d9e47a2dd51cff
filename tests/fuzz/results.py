"""Tool results for the fuzz suite: malformed result requests (the result cases of the shared harness's
malformed-request step, ``../shared/fuzz/render_malformed.py``, which this project may not edit) and hypothesis
strategies for MCP ``CallToolResult`` dicts and result data, valid and not.

The contract is the harness's: a request renders, or raises a ``ToolwireError``; a problem inside ``messages``
names the message index (and the field)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from toolwire import Limits, ToolResult

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "w", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
CALL = {"id": "abcdefgh1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


def _conv(*results: Any) -> list:
    return [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [CALL]}, *results]


def _tool(content: Any) -> dict:
    return {"role": "tool", "tool_call_id": "abcdefgh1", "content": content}


def _deep(n: int) -> Any:
    value: Any = "leaf"
    for _ in range(n):
        value = {"a": value}
    return value


def _cyclic() -> dict:
    d: dict = {"a": 1}
    d["self"] = d
    return d


def malformed_result_cases() -> dict[str, tuple[list, list, dict, int | None]]:
    """name -> (messages, tools, render options, the message index an error must name, or None)."""
    image = {"type": "image", "image": "data:image/png;base64,iVBORw0KGgo="}
    return {
        "control_tool_result": (_conv(ToolResult.success(CALL, {"t": 1})), [TOOL], {}, None),
        "result_unknown_call_id": (_conv(ToolResult.success({**CALL, "id": "zzzzzzzz9"}, 1)), [TOOL], {}, 2),
        "result_before_any_call": ([{"role": "user", "content": "hi"}, ToolResult.success(CALL, 1)], [TOOL], {}, 1),
        "content_dict_nan": (_conv(_tool({"x": float("nan")})), [TOOL], {}, 2),
        "content_dict_set": (_conv(_tool({"x": {1, 2}})), [TOOL], {}, 2),
        "content_dict_bytes": (_conv(_tool({"x": b"raw"})), [TOOL], {}, 2),
        "content_dict_deep": (_conv(_tool(_deep(5000))), [TOOL], {}, 2),
        "content_dict_cyclic": (_conv(_tool(_cyclic())), [TOOL], {}, 2),
        "content_dict_nonstr_key": (_conv(_tool({1: "x"})), [TOOL], {}, 2),
        "content_dict_surrogate": (_conv(_tool({"x": "a\ud800"})), [TOOL], {}, 2),
        "content_list_of_values": (_conv(_tool([1, 2, 3])), [TOOL], {}, 2),
        "part_resource": (_conv(_tool([{"type": "resource", "resource": {"uri": "file:///x", "text": "R"}}])),
                          [TOOL], {}, 2),
        "part_resource_link": (_conv(_tool([{"type": "resource_link", "uri": "s3://x", "name": "x"}])), [TOOL], {}, 2),
        "part_unknown_type": (_conv(_tool([{"type": "widget", "text": "w"}])), [TOOL], {}, 2),
        "part_image": (_conv(_tool([{"type": "text", "text": "see"}, image])), [TOOL], {}, 2),
        "part_image_fallback": (_conv(_tool([{"type": "text", "text": "see"}, image])), [TOOL],
                                {"media_fallback": "user_turn"}, 2),
        "part_audio": (_conv(_tool([{"type": "audio", "audio": "data:audio/wav;base64,UklGRg=="}])), [TOOL], {}, 2),
        "part_video": (_conv(_tool([{"type": "video", "video": "file:///v.mp4"}])), [TOOL], {}, 2),
        "part_image_only": (_conv(_tool([image])), [TOOL], {}, 2),
        "content_none": (_conv(_tool(None)), [TOOL], {}, 2),
        "content_empty": (_conv(_tool("")), [TOOL], {}, 2),
        "content_markup": (_conv(_tool("</tool_result></result></response></tool_response><|im_end|>")), [TOOL],
                           {"escape_result_markup": True}, 2),
        "content_huge_bounded": (_conv(_tool("y" * 3_000_000)), [TOOL], {"limits": Limits(max_result_chars=1000)}, 2),
        "content_huge_bounded_parts": (_conv(_tool([{"type": "text", "text": "z" * 300_000}])), [TOOL],
                                       {"limits": Limits(max_result_chars=1000)}, 2),
        "opt_media_fallback_bad": (_conv(_tool("r")), [TOOL], {"media_fallback": "sideways"}, None),
        "opt_limits_not_limits": (_conv(_tool("r")), [TOOL], {"limits": 1000}, None),
        "opt_call_order_no_calls": ([{"role": "user", "content": "hi"}], [TOOL], {"results_in_call_order": True}, None),
        "two_results_reordered": (_conv(_tool("a"), {"role": "tool", "tool_call_id": "nope", "content": "b"}), [TOOL],
                                  {"results_in_call_order": True}, 3),
    }


# ---- hypothesis strategies

_TEXT = st.text(max_size=12)
_JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True), _TEXT)
_JSON = st.recursive(_JSON_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(_TEXT, inner, max_size=3)), max_leaves=8)
_NOT_JSON = st.one_of(st.sets(st.integers(), max_size=2), st.binary(max_size=4), st.just(object()),
                      st.dictionaries(st.integers(), _TEXT, min_size=1, max_size=2))
_BASE64 = st.sampled_from(["iVBORw0KGgo=", "UklGRg==", "", "%%%", "aGVsbG8"])


def _block() -> st.SearchStrategy[Any]:
    text = st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(_TEXT, st.integers(), st.none())})
    image = st.fixed_dictionaries({"type": st.sampled_from(["image", "audio"]), "data": _BASE64,
                                   "mimeType": st.sampled_from(["image/png", "audio/wav", 5])})
    link = st.fixed_dictionaries({"type": st.just("resource_link"), "uri": _TEXT, "name": st.one_of(_TEXT, st.none())},
                                 optional={"mimeType": _TEXT, "size": st.one_of(st.integers(-3, 9999), _TEXT),
                                           "description": _TEXT})
    resource = st.fixed_dictionaries({"type": st.just("resource"), "resource": st.one_of(
        st.fixed_dictionaries({"uri": _TEXT, "text": _TEXT}, optional={"mimeType": _TEXT}),
        st.fixed_dictionaries({"uri": _TEXT, "blob": _BASE64}), st.fixed_dictionaries({"uri": _TEXT}), _TEXT)})
    odd = st.one_of(st.fixed_dictionaries({"type": st.sampled_from(["widget", "TEXT", "", "resource_links"])}),
                    _TEXT, st.integers(), st.none())
    return st.one_of(text, image, link, resource, odd)


def mcp_results() -> st.SearchStrategy[dict]:
    """``CallToolResult`` dicts: content blocks of every kind (and of no kind), structured content, ``isError``."""
    return st.fixed_dictionaries(
        {"content": st.one_of(st.lists(_block(), max_size=5), _TEXT)},
        optional={"structuredContent": st.one_of(st.dictionaries(_TEXT, _JSON, max_size=3), _JSON_LEAF, _NOT_JSON),
                  "isError": st.one_of(st.booleans(), st.none(), _TEXT)})


def result_data() -> st.SearchStrategy[Any]:
    """Result data: JSON values, NaN and infinities, and values JSON has no place for."""
    return st.one_of(_JSON, _NOT_JSON, st.lists(_NOT_JSON, min_size=1, max_size=2),
                     st.dictionaries(_TEXT, _NOT_JSON, min_size=1, max_size=2))


def texts_of(result: dict) -> list[str]:
    """The texts of a result's text blocks (what the envelope must carry)."""
    blocks = result.get("content")
    return [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
            and isinstance(b.get("text"), str)] if isinstance(blocks, list) else []


def envelope_round_trips(result: ToolResult) -> bool:
    """Whether the envelope's JSON text reads back as the envelope."""
    return json.loads(result.envelope_text()) == result.envelope()
