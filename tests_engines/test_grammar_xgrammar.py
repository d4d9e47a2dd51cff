"""The xgrammar target certified in xgrammar 0.2.8's own matcher (CPU), and the engines' structural-tag hooks.

1. parser-accepted => grammar-accepted: golden outputs (all calls ``proposed``, schema-valid arguments) are
   accepted as UTF-8 bytes, and as the real Qwen3 tokenizer's ids for the Qwen families;
2. grammar-generated => parser-proposed: random walks over the matcher's allowed bytes parse back;
3. every tool_choice mode;
4. vLLM 0.33.0: ``Parser.adjust_request`` puts toolwire's tag into ``structured_outputs``; SGLang 0.5.23:
   ``FunctionCallParser.get_structure_constraint`` returns it, and ``structure_info`` gives call bounds.

Numbers are printed (``pytest -s``).
"""

from __future__ import annotations

import json
import time

import pytest

import toolwire
import xgrammar as xgr
from conftest import golden_rows, hf_tokenizer, opens_reasoning
from toolwire.grammar.certify import check_outputs, check_walks
from toolwire.grammar.coverage import supported_formats
from toolwire.grammar.matchers import Matcher

FORMATS = supported_formats()
QWEN = {"qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "qwen3_coder", "qwen35", "qwen36"}
"""The families whose real tokenizer is ../shared's Qwen3 (conftest.REAL_TOKENIZER)."""


@pytest.mark.parametrize("name", FORMATS)
def test_parser_accepted_outputs_are_accepted_by_xgrammar(name):
    report = check_outputs(toolwire.get_format(name), golden_rows(name), "xgrammar", thinking_of=opens_reasoning)
    print(f"\n{name} xgrammar bytes: {report.passed}/{report.checked}; outside the claim: {report.excluded}; "
          f"rejected: {len(report.failures)}")
    with_calls = sum(1 for row in golden_rows(name) if row["expected"].get("tool_calls"))
    assert report.checked >= min(3, with_calls)  # deepseek_r1's golden outputs hold no call
    assert report.failures == []  # Seed-OSS's Python-literal values included (xml_params.python_literal)


@pytest.mark.parametrize("name", sorted(QWEN & set(FORMATS)))
def test_parser_accepted_outputs_are_accepted_as_real_token_ids(name):
    hf = hf_tokenizer("Qwen3")
    info = xgr.TokenizerInfo.from_huggingface(hf, stop_token_ids=[hf.convert_tokens_to_ids("<|im_end|>")])
    eos = hf.convert_tokens_to_ids("<|im_end|>")
    report = check_outputs(toolwire.get_format(name), golden_rows(name), "xgrammar", tokenizer=info, eos=eos,
                           encode=lambda text: hf.encode(text, add_special_tokens=False), thinking_of=opens_reasoning)
    print(f"\n{name} xgrammar Qwen3 token ids: {report.passed}/{report.checked}")
    assert report.checked >= 3 and report.failures == []


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("choice", ["required", "auto", "none", {"name": "get_weather"}])
def test_xgrammar_walks_parse_back_as_proposed(name, choice):
    tools = golden_rows(name)[0]["tools"]
    fmt = toolwire.get_format(name)
    thinking = "think_close" in fmt.markers and name != "qwen25"
    report = check_walks(fmt, tools, "xgrammar", samples=6, tool_choice=choice, thinking=thinking, seed=3)
    print(f"\n{name} xgrammar {choice}: {report.passed}/{report.checked} parsed back; unfinished {report.unfinished}")
    assert report.checked >= 4 and report.failures == []


def test_deepseek_r1_fenced_calls_in_xgrammar():
    fence = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}\n```'
             '<｜tool▁call▁end｜><｜tool▁calls▁end｜>')
    m = Matcher(toolwire.get_format("deepseek_r1").grammar(golden_rows("qwen25")[0]["tools"]))
    assert m.accepts("Checking." + fence) and not m.accepts(fence.replace("```json", "```"))


@pytest.mark.parametrize("name", ["deepseek_v32", "deepseek_v4", "deepseek_v41"])
def test_a_dsml_json_string_never_spells_a_parameter_opener(name):
    """Found by a random walk: a JSON string ending in the parameter opener (its closing quote the opener's) and
    a whole tag after it. The parser reads the next parameter there and rejects the call; the grammar refuses it,
    and accepts the same call without the opener."""
    fmt = toolwire.get_format(name)
    g = fmt.parser_class.grammar
    tools = golden_rows(name)[0]["tools"]

    def output(invoice: str) -> str:
        return (f"r{g.think_close}{g.separator}{g.block_open}\n{g.invoke_open}create_reimbursement_ticket\">\n"
                f'{g.param_open}invoice_ids" string="false">{invoice}{g.param_close}\n'
                f'{g.param_open}amount" string="false">4{g.param_close}\n'
                f'{g.param_open}reason" string="true">x{g.param_close}\n{g.invoke_close}\n{g.block_close}')

    assert g.param_open.endswith('"')
    cut, whole = output('["a' + g.param_open + "]"), output('["a"]')  # the opener's quote ends the JSON string
    assert [c.status for c in fmt.parse(cut, tools, thinking=True).tool_calls] == ["rejected"]
    assert [c.status for c in fmt.parse(whole, tools, thinking=True).tool_calls] == ["proposed"]
    matcher = Matcher(fmt.grammar(tools, target="xgrammar", tool_choice="required", thinking=True))
    assert matcher.accepts(whole) and not matcher.accepts(cut)


def test_tool_choice_modes_in_xgrammar():
    tools = golden_rows("qwen25")[0]["tools"]
    fmt = toolwire.get_format("qwen25")
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    auto, required, none, named = (Matcher(fmt.grammar(tools, tool_choice=c)) for c in
                                   ("auto", "required", "none", {"name": "search_papers"}))
    assert auto.accepts("Hi.") and auto.accepts("Sure.\n" + call)
    assert required.accepts(call + "\nDone.") and not required.accepts("Hi.")
    assert none.accepts("Hi.") and not none.accepts(call)
    assert not named.accepts(call) and named.accepts(call.replace('get_weather", "arguments": {"city": "Oslo"}',
                                                                  'search_papers", "arguments": {"query": "x"}'))


@pytest.mark.parametrize("name", FORMATS)
def test_compile_time_on_cpu(name):
    tools = golden_rows(name)[0]["tools"]
    hf = hf_tokenizer("Qwen3")
    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(hf), cache_enabled=False)
    tag = toolwire.get_format(name).grammar(tools).xgrammar()
    start = time.perf_counter()
    compiled = compiler.compile_structural_tag(tag)
    elapsed = time.perf_counter() - start
    print(f"\n{name}: xgrammar compile {elapsed * 1000:.1f} ms ({len(tools)} tools, Qwen3 vocabulary)")
    assert compiled is not None


def test_compiled_grammar_is_cached_per_request_shape():
    """toolwire writes the same tag for the same tools and tool_choice, so a caching compiler (xgrammar's default,
    what vLLM and SGLang keep per tokenizer) compiles a request shape once."""
    tools = golden_rows("minimax_m2")[0]["tools"]
    fmt = toolwire.get_format("minimax_m2")
    assert fmt.grammar(tools).text == fmt.grammar(tools).text
    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(hf_tokenizer("Qwen3")))
    start = time.perf_counter()
    compiler.compile_structural_tag(fmt.grammar(tools).xgrammar())
    first = time.perf_counter() - start
    start = time.perf_counter()
    compiler.compile_structural_tag(fmt.grammar(tools).xgrammar())
    again = time.perf_counter() - start
    print(f"\nminimax_m2 compile: first {first * 1000:.0f} ms, same shape again {again * 1000:.1f} ms")
    assert again < first / 5


# ---- the engines' hooks

def test_vllm_adjust_request_puts_the_toolwire_tag_in_structured_outputs():
    import toolwire.integrations.vllm  # noqa: F401 - registers toolwire_<format>
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser import ParserManager

    tools = golden_rows("qwen3")[0]["tools"]
    parser_cls = ParserManager.get_parser(tool_parser_name="toolwire_qwen3", reasoning_parser_name="toolwire_qwen3",
                                          enable_auto_tools=True)
    for choice, at_least_one in (("required", True),
                                 ({"type": "function", "function": {"name": "get_weather"}}, True)):
        request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=tools,
                                        tool_choice=choice)
        parser = parser_cls(hf_tokenizer("Qwen3"), request.tools, chat_template_kwargs={}, model_config=None)
        request = parser.adjust_request(request)
        tag = json.loads(request.structured_outputs.structural_tag)
        body = tag["format"]
        if body["type"] == "sequence":  # Qwen3 may open <think> itself first: optional reasoning, [blank], calls
            assert body["elements"][0]["type"] == "optional"
            body = body["elements"][-1]
        assert body["type"] == "triggered_tags" and body["triggers"] == ["<tool_call>"]
        assert body["at_least_one"] is at_least_one
        names = [t["begin"].split('"name": "')[1].split('"')[0] for t in body["tags"]]
        assert names == (["get_weather"] if isinstance(choice, dict) else [t["function"]["name"] for t in tools])
        # not strict and the default strict level: the call envelope is constrained, the arguments are free
        assert {json.dumps(t["content"]["json_schema"]) for t in body["tags"]} == {'{"type": "object"}'}
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=tools,
                                    tool_choice="auto")
    parser = parser_cls(hf_tokenizer("Qwen3"), request.tools, chat_template_kwargs={}, model_config=None)
    assert parser.adjust_request(request).structured_outputs is None  # auto, nothing strict: unconstrained


def test_vllm_strict_tool_keeps_its_schema():
    import toolwire.integrations.vllm as tw_vllm
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    tools = [dict(t, function=dict(t["function"], strict=True)) for t in golden_rows("qwen25")[0]["tools"]]
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=tools,
                                    tool_choice="required")
    parser = tw_vllm.ToolParserManager.get_tool_parser("toolwire_qwen25")(hf_tokenizer("Qwen3"), request.tools)
    tag = parser.get_structural_tag(request, reasoning=False, strict_level=None)
    assert isinstance(tag, xgr.StructuralTag)
    schemas = [t.content.json_schema for t in tag.format.tags]
    assert schemas[0] == tools[0]["function"]["parameters"]


def test_sglang_structure_constraint_is_the_toolwire_tag():
    import toolwire.integrations.sglang  # noqa: F401 - registers toolwire_<format>
    from sglang.srt.entrypoints.openai.protocol import Tool, ToolChoice
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    tools = [Tool.model_validate(t) for t in golden_rows("qwen25")[0]["tools"]]
    parser = FunctionCallParser(tools, "toolwire_qwen25")
    kind, tag = parser.get_structure_constraint("required")
    assert kind == "structural_tag" and tag.format.type == "triggered_tags" and tag.format.at_least_one
    named = ToolChoice.model_validate({"type": "function", "function": {"name": "get_weather"}})
    kind, tag = parser.get_structure_constraint(named, parallel_tool_calls=False)
    assert [t.begin for t in tag.format.tags] == ['<tool_call>\n{"name": "get_weather", "arguments": ']
    assert tag.format.stop_after_first is True
    info = parser.detector.structure_info()("get_weather")
    assert (info.begin, info.end, info.trigger) == ('<tool_call>\n{"name": "get_weather", "arguments": ',
                                                    "}\n</tool_call>", "<tool_call>")
    assert parser.detector.supports_structural_tag() is True
