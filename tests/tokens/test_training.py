"""Token-level training samples, the bridge between turns and prefix reports, with the real tokenizers in
../shared/real/tokenizers (every family that has one there)."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.tokenize import load_tokenizer, vocabulary
from toolwire.training import prefix_report

from support import REAL, require_shared

TOKENIZERS = {**dict.fromkeys(["qwen3", "qwen35", "qwen36", "qwen38", "qwen3_coder", "qwen3_instruct_2507",
                                "qwen3_thinking_2507"], "Qwen3"),
              **dict.fromkeys(["deepseek_v32", "deepseek_v4"], "DeepSeek-V4"),
              **dict.fromkeys(["deepseek_v31", "deepseek_r1"], "DeepSeek-V3"),
              "llama31": "Llama-3", "llama32": "Llama-3", "llama4": "Llama-4", "gpt_oss": "o200k_base"}
"""Every family whose tokenizer is in ../shared/real/tokenizers, except DeepSeek-V4.1 (its <｜System｜> marker is not
in the V4 vocabulary) and Qwen2.5 (the Qwen3 vocabulary makes <tool_response> a control token; Qwen2.5's does not)."""

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                            "parameters": {"type": "object", "properties": {
                                                "city": {"type": "string", "description": "City name."}},
                                                "required": ["city"]}}}]
USER = {"role": "user", "content": "Weather in Paris?"}
CALL = {"role": "assistant", "content": "", "reasoning_content": "I need the weather.", "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "18C, cloudy"}
ANSWER = {"role": "assistant", "content": "It is 18C and cloudy.", "reasoning_content": "Answer it."}
NEXT_USER = {"role": "user", "content": "And tomorrow?"}


def tokenizer(family):
    require_shared()
    return load_tokenizer(str(REAL / "tokenizers" / TOKENIZERS[family]))


def thinking(family):
    return family not in ("llama31", "llama32", "llama4", "qwen3_coder", "qwen3_instruct_2507")


def masked_turns(sample):
    """The text of each masked run, with the message it belongs to."""
    tokens, runs = sample.tokens, []
    for k, on in enumerate(sample.loss_mask):
        if not on:
            continue
        end = tokens.char_offsets[k + 1] if k + 1 < len(tokens.ids) else len(tokens.text)
        piece = tokens.text[tokens.char_offsets[k]:end]
        if runs and runs[-1][0] == tokens.message_index[k] and runs[-1][2] == k - 1:
            runs[-1] = (runs[-1][0], runs[-1][1] + piece, k)
        else:
            runs.append((tokens.message_index[k], piece, k))
    return [(i, text) for i, text, _ in runs]


@pytest.mark.parametrize("family", sorted(TOKENIZERS))
def test_masked_tokens_are_each_turn_as_the_model_wrote_it(family):
    """Every masked run is one assistant turn: minus its end marker, it parses back to that turn, and the end
    marker itself is a control token the model must learn (inside the mask)."""
    fmt, tok = toolwire.get_format(family), tokenizer(family)
    messages = [USER, CALL, RESULT, ANSWER]
    sample = fmt.training_sample(messages, TOOLS, tok, train_on="all_assistant", thinking=thinking(family))
    assert sample.ids == fmt.render(messages, TOOLS, thinking=thinking(family), add_generation_prompt=False
                                    ).token_ids(tok)
    runs = masked_turns(sample)
    assert [i for i, _ in runs] == [1, 3]
    controls = vocabulary(tok).control_ids
    last_masked = [sample.ids[k] for k, on in enumerate(sample.loss_mask) if on]
    assert last_masked[-1] in controls                      # the end-of-turn marker is trained
    for index, text in runs:
        end_marker = controls[[sample.ids[k] for k, on in enumerate(sample.loss_mask)
                               if on and sample.tokens.message_index[k] == index][-1]]
        assert text.endswith(end_marker)
        header = fmt.render(messages[:index], TOOLS, thinking=thinking(family)).opens_reasoning
        out = fmt.parse(text[:-len(end_marker)], TOOLS, thinking=header)
        turn = messages[index]
        assert out.content == turn["content"]
        assert [(c.name, c.arguments) for c in out.tool_calls] == [
            (c["function"]["name"], {"city": "Paris"}) for c in turn.get("tool_calls", [])]
        if thinking(family) and fmt.render(messages, TOOLS, thinking=True, add_generation_prompt=False
                                           ).text.count(turn["reasoning_content"]):
            assert out.reasoning == turn["reasoning_content"]


@pytest.mark.parametrize("family", ["qwen3", "deepseek_v4", "llama31"])
def test_last_assistant_masks_only_the_last_turn_and_content_mask_follows_the_segments(family):
    fmt, tok = toolwire.get_format(family), tokenizer(family)
    messages = [USER, CALL, RESULT, ANSWER]
    sample = fmt.training_sample(messages, TOOLS, tok, thinking=thinking(family))
    assert {sample.tokens.message_index[k] for k, on in enumerate(sample.loss_mask) if on} == {3}
    prompt = fmt.render(messages, TOOLS, thinking=thinking(family), add_generation_prompt=False)
    kinds, pos = [], 0
    for kind, text, _ in prompt.segments:
        kinds += [kind] * len(text)
        pos += len(text)
    assert sample.tokens.content_mask == [kinds[o] == "content" for o in sample.tokens.char_offsets]
    assert fmt.training_sample(messages, TOOLS, tok, train_on="none", thinking=thinking(family)).loss_mask == \
        [False] * len(sample.ids)


def rollout(fmt, tok, history, turn, family):
    """(prompt ids, completion ids) as an engine would have them: the prompt for ``history`` and the model's
    tokens for ``turn`` (its masked tokens in a render of history + turn)."""
    prompt_ids = fmt.render(history, TOOLS, thinking=thinking(family)).token_ids(tok)
    sample = fmt.training_sample(history + [turn], TOOLS, tok, thinking=thinking(family))
    completion = [t for t, on in zip(sample.ids, sample.loss_mask) if on]
    assert sample.ids[:len(prompt_ids)] == prompt_ids
    return prompt_ids, completion


@pytest.mark.parametrize("family", sorted(set(TOKENIZERS) - {"deepseek_r1"}))  # R1: its own test below
def test_the_bridge_in_a_tool_loop_extends_the_sampled_tokens_or_says_why(family):
    fmt, tok = toolwire.get_format(family), tokenizer(family)
    prompt_ids, completion = rollout(fmt, tok, [USER], CALL, family)
    nxt = [USER, CALL, RESULT]
    result = fmt.bridge(prompt_ids, completion, nxt, TOOLS, tok, thinking=thinking(family))
    fresh = fmt.render(nxt, TOOLS, thinking=thinking(family)).token_ids(tok)
    if result.ok:
        assert result.ids == fresh and result.ids[:len(prompt_ids) + len(completion)] == prompt_ids + completion
    else:  # never ids that disagree with a fresh render; the reason is one the family explains
        assert result.ids is None and result.reason in ("reasoning_dropped", "history_rerendered")
        assert fresh[:len(prompt_ids) + len(completion)] != prompt_ids + completion


@pytest.mark.parametrize("family, ok", [("qwen3", True), ("qwen35", True), ("deepseek_v4", True), ("llama31", True)])
def test_append_only_tool_loops_bridge(family, ok):
    fmt, tok = toolwire.get_format(family), tokenizer(family)
    prompt_ids, completion = rollout(fmt, tok, [USER], CALL, family)
    assert fmt.bridge(prompt_ids, completion, [USER, CALL, RESULT], TOOLS, tok, thinking=thinking(family)).ok is ok


@pytest.mark.parametrize("family", ["qwen3", "qwen35", "deepseek_v32"])
def test_a_new_user_turn_after_dropped_reasoning_is_refused_with_the_policys_reason(family):
    """These families drop the reasoning of answered turns when a new user message arrives, so the next prompt
    cannot extend the sampled tokens."""
    fmt, tok = toolwire.get_format(family), tokenizer(family)
    history = [USER, CALL, RESULT]
    prompt_ids, completion = rollout(fmt, tok, history, ANSWER, family)
    result = fmt.bridge(prompt_ids, completion, history + [ANSWER, NEXT_USER], TOOLS, tok, thinking=True)
    assert (result.ok, result.ids, result.reason) == (False, None, "reasoning_dropped")


def test_a_truncated_completion_is_refused():
    fmt, tok = toolwire.get_format("qwen3"), tokenizer("qwen3")
    prompt_ids, completion = rollout(fmt, tok, [USER], CALL, "qwen3")
    result = fmt.bridge(prompt_ids, completion[:-5], [USER, CALL, RESULT], TOOLS, tok, thinking=True)
    assert (result.ok, result.reason) == (False, "completion_truncated")


def test_prefix_report_in_a_tool_loop_and_after_a_new_turn():
    fmt = toolwire.get_format("qwen3")
    loop = prefix_report(fmt, {"messages": [USER], "tools": TOOLS, "options": {"thinking": True}},
                         {"messages": [USER, CALL, RESULT], "tools": TOOLS, "options": {"thinking": True}})
    assert loop.extends
    turn = prefix_report(fmt, {"messages": [USER, CALL, RESULT, ANSWER], "tools": TOOLS,
                               "options": {"thinking": True, "add_generation_prompt": False}},
                         {"messages": [USER, CALL, RESULT, ANSWER, NEXT_USER], "tools": TOOLS,
                          "options": {"thinking": True}})
    assert not turn.extends
    assert "context policy drops earlier reasoning" in turn.why and "message 1" in turn.why


def test_the_readme_example_runs():
    """The README's training example (a ``py`` block: it needs a tokenizer folder from ../shared) runs as written."""
    import re
    from pathlib import Path

    require_shared()
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Training samples and the bridge"):]
    block = re.search(r"```py\n(.*?)```", section, re.S).group(1)
    block = block.replace('"../shared/real/tokenizers/Qwen3"', repr(str(REAL / "tokenizers" / "Qwen3")))
    exec(compile(block, "README.md training block", "exec"), {"__name__": "readme_training"})


def test_a_merge_across_the_prompt_completion_boundary_is_refused():
    """The model's first token is a newline right after the prompt's own newline: the text extends, but a fresh
    tokenization writes the two newlines as one token, so the sampled ids cannot be extended."""
    fmt, tok = toolwire.get_format("qwen3_instruct_2507"), tokenizer("qwen3_instruct_2507")
    user = {"role": "user", "content": "Hi"}
    prompt_ids = fmt.render([user]).token_ids(tok)
    completion = tok.encode("\nHello there.", add_special_tokens=False) + [vocabulary(tok).control["<|im_end|>"]]
    nxt = [user, {"role": "assistant", "content": "\nHello there."}, {"role": "user", "content": "More"}]
    result = fmt.bridge(prompt_ids, completion, nxt, None, tok)
    assert (result.ok, result.ids, result.reason) == (False, None, "bpe_boundary_merge")
    fresh = fmt.render(nxt).text
    assert fresh.startswith(fmt.render([user]).text + "\nHello there.<|im_end|>")   # the text does extend


def test_the_deepseek_r1_bridge_refuses_a_history_it_rewrites():
    """R1's generation prompt opens ``<think>\\n``, but its template writes an answered tool-call turn without
    it, nor the reasoning (``<｜Assistant｜><｜tool▁calls▁begin｜>...``): the next prompt can never extend what the
    model sampled after that prompt, and the bridge says so."""
    require_shared()
    fmt, tok = toolwire.get_format("deepseek_r1"), load_tokenizer(str(REAL / "tokenizers" / "DeepSeek-V3"))
    prompt = fmt.render([USER], TOOLS)
    assert prompt.text.endswith("<｜Assistant｜><think>\n")
    sampled = "I need the weather.\n</think>\n\n" + fmt.render([USER, CALL], TOOLS, add_generation_prompt=False
                                                             ).text.split("<｜Assistant｜>")[-1]
    completion = vocabulary(tok).encode(sampled)  # control markers as their ids, the rest as text
    result = fmt.bridge(prompt.token_ids(tok), completion, [USER, CALL, RESULT], TOOLS, tok)
    # the history form drops the reasoning the model wrote there: the more precise of the two reasons
    assert (result.ok, result.ids, result.reason, result.message_index) == (False, None, "reasoning_dropped", 1)


def loop_conversation(rounds: int, steps: int) -> list[dict]:
    """``rounds`` user questions, each answered by ``steps`` tool calls and a final answer (reasoning on every
    assistant turn, one with an empty reasoning)."""
    msgs: list[dict] = []
    for r in range(rounds):
        msgs.append({"role": "user", "content": f"Question {r}?"})
        for s in range(steps):
            msgs.append({"role": "assistant", "content": "", "reasoning_content": f"Step {r}.{s}." if s else "",
                         "tool_calls": [{"id": f"c{r}_{s}", "type": "function", "function": {
                             "name": "get_weather", "arguments": f'{{"city": "C{r}{s}"}}'}}]})
            msgs.append({"role": "tool", "tool_call_id": f"c{r}_{s}", "content": f"{r}{s}C"})
        msgs.append({"role": "assistant", "content": f"Answer {r}.", "reasoning_content": "Done."})
    return msgs


def oracle_spans(fmt, messages, options):
    """Where each assistant turn's model text starts and ends, found the slow way: render the prompt that
    opened it. Where the whole prompt starts with it, the turn is what follows it; else the turn minus the part
    of the generation header it repeats, cut back to a segment boundary; then minus the template's own text
    after its end marker."""
    prompt = fmt.render(messages, TOOLS, **options)
    segs, pos = [], 0
    for kind, text, index in prompt.segments:
        segs.append((pos, pos + len(text), kind, index))
        pos += len(text)
    spans = {}
    for i, m in enumerate(messages):
        mine = [s for s in segs if s[3] == i]
        if m["role"] != "assistant" or not mine:
            continue
        start, end = mine[0][0], mine[-1][1]
        opened = fmt.render(messages[:i], TOOLS, **{**options, "add_generation_prompt": True}).text
        if start <= len(opened) <= end and prompt.text.startswith(opened):
            skip = len(opened) - start
        else:
            without = fmt.render(messages[:i], TOOLS, **{**options, "add_generation_prompt": False}).text
            header = opened[len(without):] if opened.startswith(without) else ""
            region = prompt.text[start:end]
            shared = next((k for k in range(min(len(region), len(header))) if region[k] != header[k]),
                          min(len(region), len(header)))
            ends = {b - start for _a, b, _k, _i in mine}
            skip = shared if shared in ends else max([a - start for a, _b, _k, _i in mine if a - start <= shared])
        while mine and mine[-1][2] == "template" and mine[-1][0] >= start + skip:
            end = mine.pop()[0]
        spans[i] = (start + skip, end)
    return spans


@pytest.mark.parametrize("family", ["qwen3", "qwen35", "deepseek_v4", "llama31", "gpt_oss"])
def test_masks_match_rendering_each_turns_own_prompt(family):
    """Several user rounds of tool loops (so some turns' history is re-rendered with its reasoning dropped):
    the mask is the tokens that start inside the turns the slow definition gives, turn by turn."""
    fmt, tok = toolwire.get_format(family), tokenizer(family)
    messages = loop_conversation(3, 3)
    options = {"thinking": thinking(family), "add_generation_prompt": False}
    sample = fmt.training_sample(messages, TOOLS, tok, train_on="all_assistant", **options)
    spans = oracle_spans(fmt, messages, options)
    assert len(spans) == 12
    assert sample.loss_mask == [any(a <= at < b for a, b in spans.values()) for at in sample.tokens.char_offsets]
    assert sum(sample.loss_mask) > 12


def test_training_sample_renders_a_bounded_number_of_prompts():
    """Linear cost: a conversation four times as long costs no more renders (the whole prompt, plus the prompts
    of a few turns' histories), where rendering every turn's history would grow with the number of turns."""
    fmt, tok = toolwire.get_format("qwen3"), tokenizer("qwen3")
    counts = []
    for steps in (5, 20):
        calls = []
        original = type(fmt).render

        def counting(self, *args, **kw):
            calls.append(1)
            return original(self, *args, **kw)

        type(fmt).render = counting
        try:
            fmt.training_sample(loop_conversation(2, steps), TOOLS, tok, thinking=True)
        finally:
            type(fmt).render = original
        counts.append(len(calls))
    assert counts[0] == counts[1] <= 12
