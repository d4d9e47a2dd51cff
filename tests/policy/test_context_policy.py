"""Context policy: boundaries, per-family decisions, overrides and every warning (triggered and not)."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.context_policy import WARNING_CODES, plan
from toolwire.errors import InvalidOption

from support import golden, require_shared, without_dropped_reasoning_trace

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


def call(cid, name="f"):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}


def conv_two_turns():
    return [
        {"role": "system", "content": "s"},                                                       # 0
        {"role": "user", "content": "q1"},                                                        # 1 turn
        {"role": "assistant", "content": "", "reasoning_content": "r2", "tool_calls": [call("a")]},  # 2 step
        {"role": "tool", "tool_call_id": "a", "content": "1"},                                    # 3
        {"role": "assistant", "content": "done", "reasoning_content": "r4"},                      # 4 step
        {"role": "user", "content": "q2"},                                                        # 5 turn
        {"role": "assistant", "content": "", "reasoning_content": "r6", "tool_calls": [call("b")]},  # 6 step
        {"role": "tool", "tool_call_id": "b", "content": "2"},                                    # 7
    ]


def actions(p):
    return {d.message_index: d.action for d in p.decisions}


def codes(p):
    return [w.code for w in p.warnings]


def test_boundaries_turns_and_steps():
    p = plan(conv_two_turns(), "deepseek_v32", thinking=True)
    assert p.turns == [1, 5]
    assert p.steps == [2, 4, 6]


def test_wrapped_tool_result_is_not_a_turn():
    msgs = conv_two_turns()
    msgs[7] = {"role": "user", "content": "<tool_response>\n2\n</tool_response>"}
    p = plan(msgs, "qwen3", thinking=True)
    assert p.turns == [1, 5]


@pytest.mark.parametrize("fmt, kwargs, expected", [
    ("deepseek_v32", {}, {2: "drop", 4: "drop", 6: "required"}),
    ("deepseek_v32", {"drop_thinking": False}, {2: "drop", 4: "drop", 6: "required"}),  # V3.2 ignores the switch
    ("deepseek_v4", {"tools": TOOLS}, {2: "required", 4: "keep", 6: "required"}),  # the API wants every call turn
    ("deepseek_v4", {}, {2: "drop", 4: "drop", 6: "drop"}),         # the tool result counts as the last user turn
    ("deepseek_v41", {}, {2: "drop", 4: "drop", 6: "required"}),    # ... but not in V4.1
    ("qwen3", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("qwen36", {"preserve_thinking": True}, {2: "keep", 4: "keep", 6: "keep"}),
    ("glm47", {"clear_thinking": False}, {2: "keep", 4: "keep", 6: "keep"}),
    ("glm47", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("kimi_k2_thinking", {}, {2: "drop", 4: "drop", 6: "required"}),
    ("qwen3_thinking_2507", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("qwen35", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("qwen36", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("glm45", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("glm46", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("minimax_m2", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("gpt_oss", {}, {2: "drop", 4: "drop", 6: "keep"}),     # 2: a final answer (4) follows the call
    ("seed_oss", {}, {2: "keep", 4: "keep", 6: "keep"}),
    ("qwen38", {}, {2: "keep", 4: "keep", 6: "keep"}),
    ("qwen38", {"preserve_thinking": False}, {2: "drop", 4: "drop", 6: "keep"}),
    ("nemotron3", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("nemotron3", {"truncate_history_thinking": False}, {2: "keep", 4: "keep", 6: "keep"}),
    ("step35", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("laguna", {}, {2: "keep", 4: "keep", 6: "keep"}),
    ("hy3", {}, {2: "drop", 4: "drop", 6: "keep"}),
    ("hy3", {"tools": TOOLS}, {2: "keep", 4: "keep", 6: "keep"}),
    ("hy3", {"tools": TOOLS, "preserved_thinking": False}, {2: "drop", 4: "drop", 6: "keep"}),
] + [(name, {}, {2: "drop", 4: "drop", 6: "drop"}) for name in (
    "qwen25", "qwen3_instruct_2507", "qwen3_coder", "kimi_k2", "llama31", "mistral_small32", "deepseek_v31",
    "deepseek_r1")])
def test_family_decisions(fmt, kwargs, expected):
    p = plan(conv_two_turns(), fmt, thinking=True, **kwargs)
    assert actions(p) == expected
    for d in p.decisions:
        assert d.reason
    dropped = [i for i, a in expected.items() if a == "drop"]
    assert [w.message_index for w in p.warnings if w.code == "reasoning_dropped"] == dropped
    for i in dropped:
        assert p.messages[i].reasoning_content is None
    for i in set(expected) - set(dropped):
        assert p.messages[i].reasoning_content


def test_every_format_has_a_built_in_policy():
    from toolwire.context_policy.policies import FamilyPolicy
    from toolwire.registry import families

    assert sorted(families()) == toolwire.formats()
    assert all(isinstance(f.policy, FamilyPolicy) and f.policy.description for f in families().values())


def test_gpt_oss_closing_final_answer_keeps_its_analysis():
    msgs = conv_two_turns()[:5]
    assert actions(plan(msgs, "gpt_oss", thinking=True, add_generation_prompt=False))[4] == "keep"
    assert actions(plan(msgs, "gpt_oss", thinking=True))[4] == "drop"


def test_thinking_off_drops_everything_in_deepseek():
    p = plan(conv_two_turns(), "deepseek_v4", thinking=False, tools=TOOLS)
    assert set(actions(p).values()) == {"drop"}
    assert "reasoning_missing_for_tool_turn" not in codes(p)


@pytest.mark.parametrize("policy, expected", [
    ("keep_all", {2: "required", 4: "keep", 6: "required"}),   # kept call turns are the API's required ones
    ("drop_all", {2: "drop", 4: "drop", 6: "drop"}),
    ("keep_tool_loop", {2: "drop", 4: "drop", 6: "required"}),
])
def test_overrides_warn_only_where_they_differ(policy, expected):
    p = plan(conv_two_turns(), "deepseek_v32", thinking=True, policy=policy)
    assert actions(p) == expected
    native = {2: "drop", 4: "drop", 6: "required"}
    differ = [i for i in expected if (expected[i] == "drop") != (native[i] == "drop")]
    assert [w.message_index for w in p.warnings if w.code == "policy_override"] == differ


def test_overrides_cannot_keep_what_the_template_has_no_place_for():
    p = plan(conv_two_turns(), "llama31", thinking=True, policy="keep_all")
    assert set(actions(p).values()) == {"drop"}
    assert all("never renders" in d.reason for d in p.decisions)
    assert "policy_override" not in codes(p)


def test_unknown_policy_is_refused():
    with pytest.raises(InvalidOption):
        plan(conv_two_turns(), "deepseek_v32", policy="keep_some")


# ---- warnings, each triggered and not triggered

def test_tool_result_as_user_text():
    msgs = conv_two_turns()[:3] + [{"role": "user", "content": "result: 1"}]
    p = plan(msgs, "deepseek_v4", thinking=True, tools=TOOLS)
    w = [w for w in p.warnings if w.code == "tool_result_as_user_text"]
    assert [x.message_index for x in w] == [3]
    assert "DeepSeek V4" in w[0].message
    assert "tool_result_as_user_text" not in codes(plan(conv_two_turns(), "deepseek_v4", thinking=True, tools=TOOLS))


def test_reasoning_missing_for_tool_turn():
    msgs = conv_two_turns()
    msgs[6] = {"role": "assistant", "content": "", "tool_calls": [call("b")]}
    p = plan(msgs, "deepseek_v4", thinking=True, tools=TOOLS)
    assert [w.message_index for w in p.warnings if w.code == "reasoning_missing_for_tool_turn"] == [6]
    assert "reasoning_missing_for_tool_turn" not in codes(plan(conv_two_turns(), "deepseek_v4", thinking=True,
                                                               tools=TOOLS))
    # a family that does not require passing reasoning back does not warn
    assert "reasoning_missing_for_tool_turn" not in codes(plan(msgs, "qwen3", thinking=True, tools=TOOLS))


def test_history_duplicated():
    msgs = conv_two_turns()
    dup = msgs[:5] + msgs[1:5] + msgs[5:]
    p = plan(dup, "deepseek_v32", thinking=True)
    assert [w.message_index for w in p.warnings if w.code == "history_duplicated"] == [5]
    assert "history_duplicated" not in codes(plan(msgs, "deepseek_v32", thinking=True))


def test_reasoning_in_content():
    msgs = conv_two_turns()
    msgs[4] = {"role": "assistant", "content": "<think>hmm</think>done"}
    p = plan(msgs, "qwen3", thinking=True)
    w = [w for w in p.warnings if w.code == "reasoning_in_content"]
    assert [x.message_index for x in w] == [4] and "Qwen3" in w[0].message
    assert "reasoning_in_content" not in codes(plan(conv_two_turns(), "qwen3", thinking=True))


def test_orphan_and_missing_tool_results():
    msgs = conv_two_turns()
    msgs[3] = {"role": "tool", "tool_call_id": "zzz", "content": "1"}
    p = plan(msgs, "deepseek_v32", thinking=True)
    assert [(w.code, w.message_index) for w in p.warnings if w.code in ("orphan_tool_result", "missing_tool_result")] \
        == [("orphan_tool_result", 3), ("missing_tool_result", 2)]
    clean = codes(plan(conv_two_turns(), "deepseek_v32", thinking=True))
    assert "orphan_tool_result" not in clean and "missing_tool_result" not in clean


def test_warning_codes_are_the_documented_ones():
    assert set(WARNING_CODES) >= {"tool_result_as_user_text", "reasoning_missing_for_tool_turn", "history_duplicated",
                                  "reasoning_in_content", "orphan_tool_result", "missing_tool_result",
                                  "reasoning_dropped"}


# ---- the policies reproduce the references: rendering the planned messages gives the golden prompt

def _golden_render_rows():
    rows = []
    for name in toolwire.formats():
        rows += [r for r in golden("render", name) if "expected" in r]
    return rows


def test_planned_messages_render_like_the_reference():
    require_shared()
    rows = _golden_render_rows()
    if not rows:
        pytest.skip("no family with golden vectors is built")
    failures = []
    for r in rows:
        fmt = toolwire.get_format(r["family"])
        opts = dict(r.get("options") or {})
        extra = {k: opts[k] for k in ("preserve_thinking", "clear_thinking") if k in opts}
        p = plan(r["request"]["messages"], fmt, thinking=opts.get("thinking", False),
                 add_generation_prompt=opts.get("add_generation_prompt", True),
                 drop_thinking=opts.get("drop_thinking", True), tools=r["request"].get("tools"), **extra)
        got = fmt.render(p.messages, r["request"].get("tools"), **opts).text
        if without_dropped_reasoning_trace(r["family"], got) != without_dropped_reasoning_trace(r["family"],
                                                                                                r["expected"]):
            failures.append(r["id"])
    assert not failures, f"{len(failures)}/{len(rows)} vectors differ: {failures[:10]}"


# ---- provider pass-back rules (context_policy/rules.py: PassbackRule), each in and after the tool loop

def _missing(p):
    return [w.message_index for w in p.warnings if w.code == "reasoning_missing_for_tool_turn"]


def conv_lost_reasoning(at: int):
    """The two-turn conversation with the tool-call message ``at`` (2: an earlier turn, 6: the current loop)
    sent back without its reasoning."""
    msgs = conv_two_turns()
    msgs[at] = {"role": "assistant", "content": "", "tool_calls": [call("a" if at == 2 else "b")]}
    return msgs


@pytest.mark.parametrize("fmt", ["deepseek_v32", "deepseek_v4", "deepseek_v41", "kimi_k2_thinking"])
@pytest.mark.parametrize("at", [2, 6])
def test_enforced_passback_covers_every_later_request(fmt, at):
    """DeepSeek and Kimi refuse a thinking-mode request in which ANY earlier tool-call turn lacks its reasoning,
    also after the next user message has arrived (message 2 is in the previous turn), with or without tools."""
    for tools in (TOOLS, None):
        p = plan(conv_lost_reasoning(at), fmt, thinking=True, tools=tools)
        assert _missing(p) == [at]
        warning = next(w for w in p.warnings if w.code == "reasoning_missing_for_tool_turn")
        assert "HTTP 400" in warning.message and "every later request" in warning.message
    assert _missing(plan(conv_two_turns(), fmt, thinking=True, tools=TOOLS)) == []
    if fmt != "kimi_k2_thinking":  # K2-Thinking always thinks; the DeepSeek switch off asks for nothing
        assert _missing(plan(conv_lost_reasoning(at), fmt, thinking=False, tools=TOOLS)) == []


@pytest.mark.parametrize("fmt", ["deepseek_v4", "kimi_k2_thinking"])
def test_empty_reasoning_counts_as_passed_back(fmt):
    msgs = conv_lost_reasoning(2)
    msgs[2]["reasoning_content"] = ""
    assert _missing(plan(msgs, fmt, thinking=True, tools=TOOLS)) == []


def test_provider_errors_quoted():
    from toolwire.registry import family

    assert family("deepseek_v4").policy.passback.error == \
        "The reasoning_content in the thinking mode must be passed back to the API."
    assert "reasoning_content is missing in assistant tool call message at index" in \
        family("kimi_k2_thinking").policy.passback.error


def test_minimax_rule_is_the_current_loop_and_not_enforced():
    """MiniMax documents interleaved thinking (keep each tool-call turn's thinking during the tool loop) but does
    not refuse requests: a warning in the current loop only, and no ``required`` decision."""
    p = plan(conv_lost_reasoning(6), "minimax_m2", thinking=True, tools=TOOLS)
    assert _missing(p) == [6]
    assert "HTTP 400" not in p.warnings[0].message
    assert actions(p)[6] == "keep"
    assert _missing(plan(conv_lost_reasoning(2), "minimax_m2", thinking=True, tools=TOOLS)) == []


@pytest.mark.parametrize("fmt", ["qwen3", "glm47", "gpt_oss", "kimi_k2", "deepseek_v31"])
def test_families_without_a_provider_rule_never_warn(fmt):
    assert _missing(plan(conv_lost_reasoning(6), fmt, thinking=True, tools=TOOLS)) == []


def test_plan_refuses_an_unknown_format():
    with pytest.raises(toolwire.UnknownFormat) as err:
        plan(conv_two_turns(), "qwen9")
    assert "qwen3" in str(err.value)


@pytest.mark.parametrize("name", toolwire.formats())
@pytest.mark.parametrize("thinking", [False, True])
@pytest.mark.parametrize("policy", [None, "keep_all"])
def test_kept_reasoning_is_the_plans_kept_indices(name, thinking, policy):
    """What a render asks (kept_reasoning, with its short cut for rules that keep nothing with thinking off) is
    the plan's kept_indices, for every family, thinking on and off, with and without an override."""
    from toolwire.context_policy.plan import kept_reasoning
    from toolwire.models import normalize_messages, normalize_tools

    msgs, tools = normalize_messages(conv_two_turns()), normalize_tools(TOOLS)
    expected = plan(msgs, name, thinking=thinking, policy=policy, tools=tools).kept_indices
    got = kept_reasoning(msgs, toolwire.get_format(name).family.policy, thinking=thinking, policy=policy,
                         drop_thinking=True, tools=tools, add_generation_prompt=True, extra={})
    assert got == expected


def test_thinking_only_rules_keep_nothing_with_thinking_off():
    from toolwire.registry import families

    marked = sorted(n for n, f in families().items() if getattr(f.policy.rule, "drops_all_without_thinking", False))
    assert marked == ["deepseek_v32", "deepseek_v4", "deepseek_v41", "kimi_k3"]
    for name in marked:
        assert set(actions(plan(conv_two_turns(), name, thinking=False, policy=None)).values()) == {"drop"}
        assert set(actions(plan(conv_two_turns(), name, thinking=True, drop_thinking=False)).values()) != {"drop"}
