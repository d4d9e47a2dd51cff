"""The speed paths of rendering and start-up give exactly what the plain paths give (issue 18).

* ``normalize_messages`` validates plain dicts with Message's schema minus its Python alias step, which it
  applies itself: the models must equal ``Message.model_validate`` of each dict, field by field, with the same
  fields set and extras, and models passed in come back as the same objects; ``normalize_tools`` likewise with
  Tool's schema minus ``model_post_init``. Both shortcuts (pydantic core-schema surgery, kept because each saves
  more than 10 % of its call: ``bench/bench_tricks.py``) give, over every golden render request, the models the
  plain path (pydantic's own ``TypeAdapter``) gives; ``tool_to_dict`` reads a tool's private ``_raw`` from
  ``__pydantic_private__`` (kept too: it saves about 20 % of a render with 20 tools), the value ``tool._raw`` gives;
* call arguments decoded from short ASCII text skip the JSON-value walk: what the walk refuses must still be
  refused, naming the field;
* ``tojson_indented`` equals ``json.dumps(indent=4)``, also for a one-line text seen before;
* the context plan equals a validated ``ContextPlan`` of the same fields, and its ``kept_indices`` are the kept
  decisions;
* ``import toolwire`` builds no pydantic model, and the lazily loaded names are the usual classes.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import toolwire
from support import GOLDEN, require_shared
from toolwire.context_policy.plan import ContextPlan, plan
from toolwire.errors import InvalidRequest, UnrepresentableValue
from toolwire.models import Message, call_arguments, normalize_messages
from toolwire.templates.json_text import tojson, tojson_indented

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
MESSAGES = [
    {"role": "system", "content": "s", "x-extra": [1, 2]},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "u"}}]},
    {"role": "assistant", "content": None, "thinking": "t", "tool_calls": [CALL, {"function": {"name": "g"}}]},
    {"role": "assistant", "content": "", "reasoning": "r", "reasoning_content": None},
    {"role": "assistant", "content": "x", "reasoning_content": "kept", "thinking": "ignored"},
    {"role": "assistant", "thinking": 3, "reasoning": "second alias"},
    {"role": "tool", "tool_call_id": "c1", "content": "out", "name": "f"},
    {"role": "assistant", "tool_calls": [{"id": None, "function": {"name": "h", "arguments": {"k": [1, {"z": None}]}},
                                          "index": 3}]},
    {"role": "user", "content": "Zürich", "wo_eos": True, "task": "action"},
]


def state(model):
    """Everything a model holds, recursively, as plain data (type name, fields in order, fields set, extras)."""
    if isinstance(model, list):
        return [state(m) for m in model]
    if not hasattr(model, "__pydantic_fields_set__"):
        return model
    return (type(model).__name__, [(k, state(v)) for k, v in model.__dict__.items()],
            sorted(model.__pydantic_fields_set__), model.__pydantic_extra__, model.__pydantic_private__)


def test_plain_dicts_become_the_models_pydantic_builds():
    expected = [Message.model_validate(m) for m in MESSAGES]
    got = normalize_messages(MESSAGES)
    assert state(got) == state(expected)
    assert [m.model_dump() for m in got] == [m.model_dump() for m in expected]
    assert got[2].reasoning_content == "t" and got[2].model_extra == {"thinking": "t"}
    assert got[3].reasoning_content == "r" and got[4].reasoning_content == "kept"
    assert got[5].reasoning_content == "second alias"  # the first *string* alias


def test_models_pass_through_and_mixed_lists_validate_the_dicts():
    models = normalize_messages(MESSAGES[:3])
    again = normalize_messages(models)
    assert again == models and all(a is b for a, b in zip(again, models)) and again is not models
    mixed = normalize_messages([models[0], MESSAGES[2]])
    assert mixed[0] is models[0] and state(mixed[1]) == state(Message.model_validate(MESSAGES[2]))


@pytest.mark.parametrize("bad, index, field, words", [
    ([{"role": "user", "content": "ok"}, {"content": "no role"}], 1, "role", "Field required"),
    ([{"role": "user", "content": 5}], 0, "content", "Input should be a valid"),
    ([{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}], 0, "tool_calls[0].function.name",
     "Field required"),
])
def test_a_bad_message_is_still_named(bad, index, field, words):
    with pytest.raises(InvalidRequest) as err:
        normalize_messages(bad)
    assert err.value.message_index == index and err.value.field == field and words in str(err.value)


def _call(arguments: str) -> toolwire.ToolCall:
    return normalize_messages([{"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}]}])[0].tool_calls[0]


def test_short_ascii_arguments_are_still_refused_where_the_walk_refuses():
    with pytest.raises(UnrepresentableValue) as err:
        call_arguments(_call('{"q": "a\\ud800b"}'), 2, 0)  # an escape that decodes to a lone surrogate
    assert "lone surrogate" in str(err.value) and err.value.field == "tool_calls[0].function.arguments.q"
    deep = '{"a": ' + "[" * 256 + "]" * 256 + "}"  # 257 levels: 514 characters, past the shortcut
    with pytest.raises(UnrepresentableValue, match="nests deeper than 256"):
        call_arguments(_call(deep), 0, 0)
    shallow = '{"a": ' + "[" * 255 + "]" * 255 + "}"  # 256 levels: allowed
    assert call_arguments(_call(shallow), 0, 0)["a"] == json.loads(shallow)["a"]
    assert call_arguments(_call('{"n": 1.5, "s": "x", "l": [true, null]}'), 0, 0) == {
        "n": 1.5, "s": "x", "l": [True, None]}


@pytest.mark.parametrize("value", [
    {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}},
    {"a": [], "b": {}, "c": [1, [2, {"d": "é"}]], "e": None, "f": 1.0, "g": float("inf")},
    {1: "int key", "1": "str key"},  # two keys written alike
    [("tuple", 1), ["list", 1]],
    "plain string", 3, [],
])
def test_indented_json_is_json_dumps_indent_4(value):
    expected = json.dumps(value, ensure_ascii=False, indent=4)
    assert tojson_indented(value) == expected
    assert tojson_indented(value) == expected  # the second time from the cache
    assert tojson(value) == json.dumps(value, ensure_ascii=False)


def test_indented_json_refuses_what_json_dumps_refuses():
    with pytest.raises(TypeError, match="not JSON serializable"):
        tojson_indented({"a": {1, 2}})


@pytest.mark.parametrize("fmt", ["deepseek_v4", "qwen3", "gpt_oss", "kimi_k2", "glm47"])
@pytest.mark.parametrize("thinking", [False, True])
def test_the_plan_equals_a_validated_plan(fmt, thinking):
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "reasoning_content": "r1", "tool_calls": [CALL]},
                {"role": "tool", "tool_call_id": "c1", "content": "out"},
                {"role": "assistant", "reasoning_content": "r2", "content": "a"},
                {"role": "user", "content": "q2"}]
    built = plan(messages, fmt, thinking=thinking, tools=[{"type": "function", "function": {"name": "f"}}])
    validated = ContextPlan(**{name: getattr(built, name) for name in ContextPlan.model_fields})
    validated.kept_indices  # a cached property: both plans hold it once read
    built.kept_indices
    assert built == validated and state(built) == state(validated)
    assert built.model_dump() == validated.model_dump() and repr(built) == repr(validated)
    assert built.kept_indices == frozenset(d.message_index for d in built.decisions if d.kept)


def test_import_builds_no_pydantic_model_and_names_load_on_use():
    code = ("import sys, toolwire; assert 'pydantic' not in sys.modules, 'pydantic at import';"
            "assert 'toolwire.models' not in sys.modules;"
            "from toolwire import Message, ParsedOutput;"
            "import toolwire.models, toolwire.output;"
            "assert Message is toolwire.models.Message and ParsedOutput is toolwire.output.ParsedOutput;"
            "assert toolwire.ToolSet is toolwire.dispatch.validation.ToolSet;"
            "print(sorted(set(toolwire.__all__) - set(dir(toolwire))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_output_helpers_bind_when_output_is_imported_first():
    code = ("from toolwire.output import ParsedOutput, ToolCallCandidate;"
            "c = ToolCallCandidate(index=0, id='c0', name='f', arguments={'a': 1}, raw_arguments='{\"a\": 1}');"
            "p = ParsedOutput(content='', tool_calls=[c]);"
            "v = p.validate([{'type': 'function', 'function': {'name': 'f', 'parameters': {'type': 'object'}}}]);"
            "print(p.finish_reason(), v.tool_calls[0].status, len(v.tool_calls[0].fingerprint()) > 8)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["tool_calls", "validated", "True"]


TOOL_DICTS = [
    {"type": "function", "function": {"name": "f", "description": "d", "parameters": {
        "type": "object", "properties": {"a": {"type": "string", "enum": ["x", "é"]}}, "required": ["a"]}}, "x": 1},
    {"type": "function", "function": {"name": "g"}},
]


def test_tool_dicts_become_the_models_pydantic_builds():
    from toolwire.models import Tool, normalize_tools, tool_to_dict

    expected = [Tool.model_validate(raw) for raw in TOOL_DICTS]
    for tool, raw in zip(expected, TOOL_DICTS):
        tool._raw = raw
    got = normalize_tools(TOOL_DICTS)
    assert state(got) == state(expected) and got == expected
    assert [tool_to_dict(t) for t in got] == TOOL_DICTS and tool_to_dict(got[0]) is TOOL_DICTS[0]


def _nested(depth: int) -> dict:
    value: dict = {"type": "string"}
    for _ in range(depth - 1):
        value = {"items": value}
    return value


@pytest.mark.parametrize("parameters, refusal", [
    (_nested(256), None),
    (_nested(257), "nests deeper than 256"),
    ({"type": "object", 1: "int key"}, "Input should be a valid string"),  # pydantic's dict[str, Any]
    ({"type": "object", "enum": {1, 2}}, "holds a set"),
    ({"type": "object", "default": "a\ud800"}, "lone surrogate"),
    ({"type": "object", "x\udfff": 1}, "lone surrogate"),
    ({"type": "object", "default": 10 ** 5000}, "more than 4300 digits"),
    ({"type": "object", "default": [1.5, True, None, "é", (1, 2)]}, None),
])
def test_tool_parameters_are_refused_exactly_where_the_full_walk_refuses(parameters, refusal):
    from toolwire.models import normalize_tools

    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    if refusal is None:
        assert normalize_tools([tool])[0].function.parameters == parameters
        return
    with pytest.raises(InvalidRequest, match=refusal) as err:
        normalize_tools([tool])
    assert err.value.field.startswith("tools[0].function.parameters")


def test_the_plain_adapter_fallback_gives_the_same_models(monkeypatch):
    import toolwire.models as models

    assert models._PLAIN_MESSAGES is not None and models._PLAIN_TOOLS is not None  # the shortcuts are in use here
    fast = (normalize_messages(MESSAGES), models.normalize_tools(TOOL_DICTS))
    monkeypatch.setattr(models, "_PLAIN_MESSAGES", None)
    monkeypatch.setattr(models, "_PLAIN_TOOLS", None)
    plain = (normalize_messages(MESSAGES), models.normalize_tools(TOOL_DICTS))
    assert state(fast[0]) == state(plain[0]) and state(fast[1]) == state(plain[1])


def _golden_requests() -> list[dict]:
    """Every distinct request of the golden render vectors (all families)."""
    require_shared()
    seen: dict[str, dict] = {}
    for path in sorted((GOLDEN / "render").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                request = json.loads(line)["request"]
                seen.setdefault(json.dumps(request, sort_keys=True), request)
    return list(seen.values())


def _reasoning_as(message: dict, alias: str) -> dict:
    """The message with its ``reasoning_content`` under another name Message accepts (``thinking``, ``reasoning``)."""
    if "reasoning_content" not in message:
        return message
    renamed = {k: v for k, v in message.items() if k != "reasoning_content"}
    renamed[alias] = message["reasoning_content"]
    return renamed


def _validated(normalize, value):
    """The models' state, or the refusal (type, message, index, field)."""
    try:
        return state(normalize(value))
    except InvalidRequest as exc:
        return type(exc).__name__, str(exc), exc.message_index, exc.field


def test_the_plain_adapters_give_the_same_models_over_the_golden_requests(monkeypatch):
    """The slow path of both schema shortcuts (``_PLAIN_MESSAGES`` / ``_PLAIN_TOOLS`` None: pydantic's
    ``TypeAdapter`` of the plain models) against the shortcut, on every golden render request."""
    import toolwire.models as models

    requests = _golden_requests()
    assert len(requests) > 50 and sum(bool(r["tools"]) for r in requests) > 50
    aliased = [{**r, "messages": [_reasoning_as(m, alias) for m in r["messages"]]}
               for alias in ("thinking", "reasoning")
               for r in requests if any("reasoning_content" in m for m in r["messages"])]
    assert len(aliased) > 20  # the alias step the shortcut runs itself, on the same requests
    requests += aliased
    assert models._PLAIN_MESSAGES is not None and models._PLAIN_TOOLS is not None  # the shortcuts are in use here

    def run():
        return [(_validated(normalize_messages, r["messages"]), _validated(models.normalize_tools, r["tools"]))
                for r in requests]

    fast = run()
    monkeypatch.setattr(models, "_PLAIN_MESSAGES", None)
    monkeypatch.setattr(models, "_PLAIN_TOOLS", None)
    plain = run()
    assert fast == plain
    assert any(isinstance(messages, list) for messages, _ in fast)  # models were compared, not only refusals


def test_tool_to_dict_reads_the_private_raw_as_tool_raw_gives_it(monkeypatch):
    """The plain read of a tool's raw dict (``tool._raw``, through pydantic's ``__getattr__``) against the one
    ``tool_to_dict`` makes, for the tools of every golden render request validated both ways (shortcut and
    ``TypeAdapter``), bare function definitions, Tool models given as models, built directly and copied."""
    import toolwire.models as models
    from toolwire.models import FunctionDef, Tool, tool_to_dict

    given = [t for r in _golden_requests() for t in r["tools"] or ()]
    assert len(given) > 50
    tools = models.normalize_tools(given)
    monkeypatch.setattr(models, "_PLAIN_TOOLS", None)
    tools += models.normalize_tools(given)
    tools += models.normalize_tools([{"name": "bare", "parameters": {"type": "object"}}, Tool.model_validate(given[0])])
    tools += [Tool(function=FunctionDef(name="built")), tools[0].model_copy(), tools[-1].model_copy(deep=True)]
    for tool in tools:
        raw = tool._raw
        assert tool.__pydantic_private__.get("_raw") is raw
        if raw is not None:
            assert tool_to_dict(tool) is raw
        else:
            assert tool_to_dict(tool) == tool.model_dump(exclude_unset=True, by_alias=True)
    assert sum(t._raw is None for t in tools) == 3  # the model given as a model, the built one and its deep copy
