"""Cache stability (toolwire.history.stability, HistoryKeeper.stability) and the retention switches
(toolwire.history.retention): whether a request's prompt extends the previous turn's prompt and completion, and
when it does not, where and why: a policy drop, a client that dropped reasoning or rewrote a message, an effort
line, a date, a tokenisation that does not continue the sampled ids."""

from __future__ import annotations

import pytest

import toolwire
from support import REAL, require_shared
from toolwire.history import HistoryKeeper, cache_report, model_completion, retention_switches, stable_options
from toolwire.tokenize import load_tokenizer, vocabulary

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
USER = {"role": "user", "content": "Weather in Paris?"}
A1 = {"role": "assistant", "content": "", "reasoning_content": "Need the tool.", "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
R1 = {"role": "tool", "tool_call_id": "c1", "content": "18C"}
ANSWER = {"role": "assistant", "content": "It is 18C.", "reasoning_content": "Report it."}
CALL2 = {"role": "assistant", "content": "", "reasoning_content": "Check Rome too.", "tool_calls": [
    {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]}
R2 = {"role": "tool", "tool_call_id": "c2", "content": "21C"}
USER2 = {"role": "user", "content": "And tomorrow?"}
THINK = {"thinking": True}


def without_reasoning(m: dict) -> dict:
    return {k: v for k, v in m.items() if k != "reasoning_content"}


def request(messages, tools=TOOLS, **options):
    return {"messages": messages, "tools": tools, "options": {**THINK, **options}}


def test_a_tool_loop_extends_and_a_dropped_reasoning_is_located_and_named():
    fmt = toolwire.get_format("qwen3")
    prev = request([USER])
    report = cache_report(fmt, prev, request([USER, A1, R1]), turn=A1)
    assert report.extends and report.fraction == 1.0 and report.cause == ""
    report = cache_report(fmt, prev, request([USER, without_reasoning(A1), R1]), turn=A1)
    assert not report.extends and report.cause == "client_dropped_reasoning" and report.message_index == 1
    cached = fmt.render([USER], TOOLS, **THINK).text
    assert report.char >= len(cached) and report.fraction < 1.0
    assert fmt.render([USER, without_reasoning(A1), R1], TOOLS, **THINK).text[:report.char] == \
        fmt.render([USER, A1, R1], TOOLS, **THINK).text[:report.char]


def test_a_new_user_message_is_a_policy_drop_naming_the_decision():
    fmt = toolwire.get_format("qwen3")
    report = cache_report(fmt, request([USER, A1, R1]), request([USER, A1, R1, ANSWER, USER2]), turn=ANSWER)
    assert not report.extends and report.cause == "policy_drop"
    assert report.message_index == 1 and any("message 1" in d and "last real user query" in d
                                             for d in report.decisions)


def test_an_effort_line_and_a_date_are_named():
    gpt = toolwire.get_format("gpt_oss")
    report = cache_report(gpt, request([USER], reasoning_effort="low"), request([USER, A1, R1], reasoning_effort="high"),
                          turn=A1)
    assert (report.extends, report.cause) == (False, "effort_line") and report.message_index is None
    assert "Reasoning: high" in gpt.render([USER, A1, R1], TOOLS, thinking=True, reasoning_effort="high").text[
        report.char - 20:report.char + 20]
    llama = toolwire.get_format("llama31")
    report = cache_report(llama, {"messages": [USER], "tools": TOOLS, "options": {"current_date": "2026-01-01"}},
                          {"messages": [USER, without_reasoning(A1), R1], "tools": TOOLS,
                           "options": {"current_date": "2026-01-02"}}, turn=without_reasoning(A1))
    assert (report.extends, report.cause) == (False, "date")


def test_client_rewrites_are_named():
    fmt = toolwire.get_format("qwen3")
    edited_user = {"role": "user", "content": "Weather in Lyon?"}
    report = cache_report(fmt, request([USER, A1, R1]), request([edited_user, A1, R1, CALL2, R2]), turn=CALL2)
    assert (report.cause, report.message_index) == ("client_rewrite", 0) and "message 0" in report.detail
    two = {**A1, "tool_calls": A1["tool_calls"] + CALL2["tool_calls"]}
    ra, rb = R1, {**R2, "tool_call_id": "c2"}
    report = cache_report(fmt, request([USER, two, ra, rb]), request([USER, two, rb, ra, ANSWER]), turn=ANSWER)
    assert report.cause == "client_rewrite" and "re-ordered" in report.detail
    report = cache_report(fmt, request([USER, A1, R1]), request([USER, A1, R1, ANSWER], tools=None),
                          turn=ANSWER)
    assert report.cause == "tools_changed"


def test_the_keeper_reports_the_previous_turn_and_restoring_makes_it_extend():
    fmt = toolwire.get_format("qwen36")
    keeper = HistoryKeeper(fmt)
    assert keeper.stability([USER], TOOLS, **THINK).cause == "no_previous"
    keeper.record([USER], A1, TOOLS, **THINK)
    sent = [USER, without_reasoning(A1), R1]
    before = keeper.stability(sent, TOOLS, **THINK)
    assert before.previous_found and before.cause == "client_dropped_reasoning"
    after = keeper.stability(keeper.restore(sent, TOOLS, **THINK).messages, TOOLS, **THINK)
    assert after.extends and after.fraction == 1.0
    # found by conversation id too, after the client rewrote the only user message (the turn key cannot match)
    keeper.record([USER], A1, TOOLS, conversation="conv-7", **THINK)
    edited = [{"role": "user", "content": "Weather in Lyon?"}, A1, R1]
    assert not keeper.stability(edited, TOOLS, **THINK).previous_found
    report = keeper.stability(edited, TOOLS, conversation="conv-7", **THINK)
    assert (report.cause, report.message_index) == ("client_rewrite", 0)


def test_token_ids_a_fresh_tokenisation_breaks_and_the_sampled_ids_keep():
    """The model sampled its turn as other ids than a fresh tokenisation gives (one id per character here): the
    text extends but the ids do not (``tokenization``); with the sampled ids spliced in they do."""
    require_shared()
    tok = load_tokenizer(str(REAL / "tokenizers" / "Qwen3"))
    fmt = toolwire.get_format("qwen3")
    vocab = vocabulary(tok)
    prompt = fmt.render([USER], TOOLS, **THINK).text
    full = fmt.render([USER, A1], TOOLS, add_generation_prompt=False, **THINK).text
    completion = full[len(prompt):full.rindex("<|im_end|>") + len("<|im_end|>")]
    sampled, pos = [], 0
    for m in vocab.find_controls(completion):
        sampled += [t for ch in completion[pos:m.start()] for t in vocab.encode_plain(ch)] + [vocab.control[m.group()]]
        pos = m.end()
    report = cache_report(fmt, request([USER]), request([USER, A1, R1]), completion=sampled, tokenizer=tok)
    assert report.extends_text and not report.extends and report.cause == "tokenization"
    assert report.token == len(fmt.render([USER], TOOLS, **THINK).token_ids(tok)) + \
        next(k for k, (x, y) in enumerate(zip(sampled, vocab.encode(completion))) if x != y)
    keeper = HistoryKeeper(fmt)
    keeper.record([USER], A1, TOOLS, token_ids=sampled, **THINK)
    restored = keeper.restore([USER, without_reasoning(A1), R1], TOOLS, token_ids=True, **THINK)
    report = keeper.stability(restored.messages, TOOLS, tokenizer=tok, **THINK)
    assert report.extends and report.reused_tokens == report.cached_tokens


@pytest.mark.parametrize("family", sorted(retention_switches()))
def test_the_stable_retention_switch_keeps_the_prefix_across_a_new_user_message(family):
    """Previous request: a tool loop; the model answers (or calls again); the client asks again. With the family's
    own switch from stable_options the prompt extends the cached prompt and completion wherever the template keeps
    that reasoning; the default breaks it where the family's policy drops it. No tools declared, so DeepSeek V4 and Hy3
    use their default of dropping (with tools they keep everything either way)."""
    fmt = toolwire.get_format(family)
    switch = retention_switches()[family]
    assert switch.option in fmt.family.options.fields
    for turn, after in ((ANSWER, [USER2]), (CALL2, [R2, USER2])):
        reports = {}
        for mode, extra in (("default", {}), ("stable", stable_options(family))):
            prev = {"messages": [USER, A1, R1], "tools": None, "options": {**THINK, **extra}}
            cur = {"messages": [USER, A1, R1, turn, *after], "tools": None, "options": {**THINK, **extra}}
            reports[mode] = cache_report(fmt, prev, cur, turn=turn)
        keeps_by_default = family in ("qwen38", "laguna")  # their default keeps every reasoning (thinking on)
        assert reports["default"].extends == keeps_by_default
        if not keeps_by_default:
            assert reports["default"].cause == "policy_drop"
        if family == "gemma4" and turn is ANSWER:  # the option's note: only tool-call turns keep their reasoning
            assert (reports["stable"].extends, reports["stable"].cause) == (False, "policy_drop")
        elif family == "gigachat35":
            # the template ends a turn that ends the conversation with </s> and the same turn in history with
            # <|message_sep|>: a model that stopped on </s> breaks the cache at that token only; one that stopped on
            # <|message_sep|> (the other stop token) keeps all of it
            stable = reports["stable"]
            assert (stable.extends, stable.cause, stable.cached_chars - stable.reused_chars) == \
                (False, "template_rerenders", len("</s>") - 1)
            sampled = model_completion(fmt, prev["messages"], turn, None, **prev["options"])
            assert sampled.endswith("</s>")
            assert cache_report(fmt, prev, cur, completion=sampled[:-len("</s>")] + "<|message_sep|>").extends
        else:
            assert reports["stable"].extends, (family, reports["stable"])


def test_the_retention_switches_are_the_declared_ones():
    assert sorted(retention_switches()) == ["deepseek_v4", "deepseek_v41", "gemma4", "gigachat35", "glm47", "hy3",
                                            "laguna", "lfm25", "nemotron3", "qwen36", "qwen38"]


def test_stable_options_of_families_with_one_retention_are_empty():
    assert stable_options("qwen3") == {} and stable_options("deepseek_v32") == {}
    assert stable_options(toolwire.get_format("glm47")) == {"clear_thinking": False}
    with pytest.raises(toolwire.UnknownFormat):
        stable_options("no_such_family")
