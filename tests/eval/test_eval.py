"""toolwire.eval on BFCL v4 (the bfcl-eval package's data) and on toolwire's own suite format.

The expected answers are rendered as model output by each family's own renderer (the assistant turn minus
the generation prompt), so a perfect model scores 100%; perturbations of those outputs must move exactly
the metric they should."""

from __future__ import annotations

import json

import pytest

import toolwire
from toolwire.eval import load_bfcl, load_jsonl, prompts, score
from toolwire.eval.report import confusion, html_report, text_table


try:
    ITEMS = load_bfcl()
except toolwire.errors.MissingExtra:  # pragma: no cover - the dev extra installs bfcl-eval
    ITEMS = []

needs_bfcl = pytest.mark.skipif(not ITEMS, reason="bfcl-eval is not installed (pip install --no-deps bfcl-eval)")


def first_acceptable(options):
    """The first acceptable value of a BFCL option list, nested values resolved the same way."""
    return resolve(next(o for o in options if o != ""))


def resolve(value):
    """An acceptable value with its nested objects' option lists resolved to their first choice."""
    if isinstance(value, dict):
        return {k: first_acceptable(v) for k, v in value.items() if any(o != "" for o in v)}
    if isinstance(value, list):
        return [resolve(v) for v in value]
    return value


_FITS = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict}


def fits(value, schema):
    """Whether a value has the JSON type its parameter schema declares (BFCL answers sometimes do not:
    ``True`` for a ``string`` parameter)."""
    kind = (schema or {}).get("type")
    if kind not in _FITS:
        return True
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, _FITS[kind])


def arguments_for(item, call):
    """The answer's arguments: per argument, the first acceptable value of the declared type (an optional
    argument whose values all contradict its schema is left out)."""
    shown = {n: s for s, n in item.names.items()}
    tool = next(t["function"] for t in item.tools if t["function"]["name"] == shown.get(call["name"], call["name"]))
    props = (tool.get("parameters") or {}).get("properties", {})
    out = {}
    for name, options in call["arguments"].items():
        if name not in props and "" in options:
            continue  # an optional argument the tool does not even declare (a BFCL answer slip)
        choices = [o for o in options if o != "" and fits(o, props.get(name))]
        if choices:
            out[name] = resolve(choices[0])
        elif "" not in options and any(o != "" for o in options):
            out[name] = first_acceptable(options)
    return out


def answer_message(item, calls=None):
    calls = item.expected if calls is None else calls
    shown = {n: s for s, n in item.names.items()}
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"call{k}", "type": "function", "function": {
            "name": shown.get(c["name"], c["name"]),
            "arguments": json.dumps(arguments_for(item, c) if c["name"] in item.names.values() else {})}}
        for k, c in enumerate(calls)]}


def model_output(fmt, item, message):
    """The turn as the model writes it: the render with the turn minus the render up to the generation prompt,
    minus the end-of-turn text that follows the model's last token (thinking off: the answers carry no reasoning)."""
    prompt = fmt.render(item.messages, item.tools, thinking=False).text
    full = fmt.render(item.messages + [message], item.tools, add_generation_prompt=False, thinking=False).text
    assert full.startswith(prompt)
    out = full[len(prompt):]
    for stop in ("<|im_end|>\n", "<｜end▁of▁sentence｜>", "<|call|>", "<|observation|>", "<|user|>"):
        if out.endswith(stop):
            return out[:-len(stop)]
    return out


def perfect_outputs(fmt, items):
    outputs = {}
    for item in items:
        if isinstance(item.expected, list):
            outputs[item.id] = model_output(fmt, item, answer_message(item))
        elif item.expected == "any_call":  # any call to a declared tool is relevant
            name = item.tools[0]["function"]["name"]
            outputs[item.id] = model_output(fmt, item, {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call0", "type": "function", "function": {"name": name, "arguments": "{}"}}]})
        else:
            outputs[item.id] = "None of the available tools can answer this, so here is what I know."
    return outputs


@needs_bfcl
def test_the_suite_has_every_category():
    assert {i.category for i in ITEMS} == {"simple", "multiple", "parallel", "parallel_multiple", "irrelevance",
                                            "live_relevance", "live_irrelevance"}
    assert len(ITEMS) > 2000
    schema = next(i for i in ITEMS if i.id == "simple_python_0").tools[0]["function"]["parameters"]
    assert schema["type"] == "object"                   # BFCL's "dict"
    assert next(i for i in ITEMS if i.id == "simple_python_1").tools[0]["function"]["name"] == "math_factorial"


@needs_bfcl
@pytest.mark.parametrize("family", toolwire.formats())
def test_every_bfcl_item_renders_as_the_formats_renderer_does(family):
    fmt = toolwire.get_format(family)
    records = list(prompts(fmt, ITEMS))
    assert [r["id"] for r in records] == [i.id for i in ITEMS]
    for item, record in zip(ITEMS, records):
        try:
            expected = fmt.render(item.messages, item.tools)
        except toolwire.ToolwireError:
            assert record["prompt"] is None and record["error"]
        else:
            assert (record["prompt"], record["opens_reasoning"]) == (expected.text, expected.opens_reasoning)


SCORED = ["qwen3", "deepseek_v4", "glm47", "gpt_oss", "llama31", "kimi_k2", "qwen35"]


@needs_bfcl
@pytest.mark.parametrize("family", SCORED)
def test_the_expected_answers_rendered_by_the_family_score_100_percent(family):
    fmt = toolwire.get_format(family)
    items = [i for i in ITEMS if _renders(fmt, i)]
    if family == "gpt_oss":  # harmony writes one call per model turn (the template keeps only the first)
        items = [i for i in items if not isinstance(i.expected, list) or len(i.expected) == 1]
    evaluation = score(fmt, items, perfect_outputs(fmt, items), progress=False, thinking=False)
    wrong = [s for s in evaluation.scores if not s.correct]
    assert wrong == [], wrong[:3]
    overall = evaluation.overall
    assert (overall.accuracy, overall.call_precision, overall.call_recall, overall.argument_accuracy) == (1, 1, 1, 1)
    assert (overall.false_call_rate, overall.miss_rate) == (0, 0)


def _renders(fmt, item):
    try:
        fmt.render(item.messages + ([answer_message(item)] if isinstance(item.expected, list) else []), item.tools,
                   add_generation_prompt=not isinstance(item.expected, list))
        return True
    except toolwire.ToolwireError:
        return False


def by_id(evaluation):
    return {s.id: s for s in evaluation.scores}


@needs_bfcl
def test_perturbations_move_exactly_their_metric():
    fmt = toolwire.get_format("qwen3")
    simple = next(i for i in ITEMS if i.id == "simple_python_1")            # math.factorial(number=5)
    multiple = next(i for i in ITEMS if i.category == "multiple" and len(i.tools) > 1)
    parallel = next(i for i in ITEMS if i.category == "parallel" and len(i.expected) == 2)
    irrelevant = next(i for i in ITEMS if i.category == "irrelevance")
    other_tool = next(t["function"]["name"] for t in multiple.tools
                      if multiple.names[t["function"]["name"]] != multiple.expected[0]["name"])
    outputs = {
        simple.id: model_output(fmt, simple, answer_message(simple, [
            {"name": "math.factorial", "arguments": {}}])),                  # a required argument left out
        multiple.id: model_output(fmt, multiple, answer_message(multiple, [
            {"name": multiple.names[other_tool], "arguments": {}}])),          # the wrong tool
        parallel.id: model_output(fmt, parallel, answer_message(parallel, parallel.expected + parallel.expected[:1])),
        irrelevant.id: model_output(fmt, irrelevant, {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": irrelevant.tools[0]["function"]["name"],
                                                         "arguments": "{}"}}]}),  # a call where none fits
    }
    ev = by_id(score(fmt, [simple, multiple, parallel, irrelevant], outputs, progress=False))
    assert (ev[simple.id].miss, ev[simple.id].attribution, ev[simple.id].names_ok) == ("wrong_arguments", "model", True)
    assert ev[simple.id].args_matched == 0 and ev[simple.id].args_total == 1
    assert (ev[multiple.id].miss, ev[multiple.id].names_ok) == ("wrong_tool", False)
    assert (ev[parallel.id].miss, ev[parallel.id].matched, ev[parallel.id].predicted) == ("extra_call", 2, 3)
    assert (ev[irrelevant.id].miss, ev[irrelevant.id].called) == ("called_when_no_tool_fits", True)

    # no call at all, malformed JSON and a truncated call, on the same simple item
    for text, miss, cause, code in [
        ("The factorial of 5 is 120.", "no_call", "model", None),
        ('<tool_call>\n{"name": "math_factorial", "arguments": {"number": 5,}}\n</tool_call>', None, None, None),
        ('<tool_call>\n{"name": "math_factorial", "arguments": {"num', "wrong_arguments", "output_malformed", None),
    ]:
        s = by_id(score(fmt, [simple], {simple.id: text}, progress=False))[simple.id]
        if miss is None:  # a repaired trailing comma is still the right call
            assert s.correct
            continue
        assert (s.miss, s.attribution) == (miss, cause), s
        if cause == "output_malformed":
            assert s.codes


@needs_bfcl
def test_irrelevance_answered_with_text_is_a_correct_refusal():
    fmt = toolwire.get_format("deepseek_v4")
    items = [i for i in ITEMS if i.category in ("irrelevance", "live_irrelevance")][:50]
    evaluation = score(fmt, items, {i.id: "I can't do that with these tools." for i in items}, progress=False)
    assert evaluation.overall.accuracy == 1 and evaluation.overall.false_call_rate == 0
    assert confusion(evaluation)["no call expected, no call"] == 50


def test_own_suite_format(tmp_path):
    suite = tmp_path / "suite.jsonl"
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    rows = [
        {"id": "a", "category": "weather", "messages": [{"role": "user", "content": "Weather in Paris?"}],
         "tools": tools, "expected": [{"name": "get_weather", "arguments": {"city": ["Paris", "paris, fr"]}}]},
        {"id": "b", "category": "chat", "messages": [{"role": "user", "content": "Hi!"}], "tools": tools,
         "expected": "no_call"},
    ]
    suite.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    items = load_jsonl(str(suite))
    fmt = toolwire.get_format("qwen3")
    outputs = {"a": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "PARIS, FR"}}\n</tool_call>',
               "b": "Hello! How can I help?"}
    evaluation = score(fmt, items, outputs, progress=False)
    assert evaluation.overall.accuracy == 1
    assert set(evaluation.by_category) == {"weather", "chat"}
    assert "overall" in text_table(evaluation)


@needs_bfcl
def test_the_html_report_is_valid_and_holds_its_plots():
    lxml_html = pytest.importorskip("lxml.html")
    fmt = toolwire.get_format("qwen3")
    items = [i for i in ITEMS if i.category in ("simple", "irrelevance")][:40]
    outputs = perfect_outputs(fmt, items)
    outputs[items[0].id] = "no call here"
    page = html_report(score(fmt, items, outputs, progress=False))
    doc = lxml_html.document_fromstring(page)
    images = doc.xpath("//img")
    assert len(images) >= 2 and all(img.get("src").startswith("data:image/png;base64,") for img in images)
    assert doc.xpath("//h2/text()") == ["Metrics", "Call / no call", "Plots", "Every miss"]
    assert items[0].id in page


@needs_bfcl
def test_an_output_cut_inside_the_call_header_is_malformed_not_a_model_miss():
    fmt = toolwire.get_format("qwen3")
    simple = next(i for i in ITEMS if i.id == "simple_python_1")
    s = by_id(score(fmt, [simple], {simple.id: '<tool_call>\n{"name": "math_fact'}, progress=False))[simple.id]
    assert (s.correct, s.miss, s.attribution) == (False, "no_call", "output_malformed")
    assert "truncated" in s.codes or s.codes
