"""The fingerprints the keeper keys by (toolwire.history.visible), as properties: what clients do to an echoed
history without changing what it says leaves them equal; any visible change makes them differ."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

import toolwire
from toolwire.history import HistoryKeeper, context_fingerprints, turn_fingerprint

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
values = st.recursive(st.none() | st.booleans() | st.integers(-10 ** 6, 10 ** 6) | texts,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
                      max_leaves=8)
arguments = st.dictionaries(st.text("abcdefgh_", min_size=1, max_size=8), values, max_size=4)
names = st.sampled_from(["get_weather", "search", "lookup"])


@st.composite
def conversations(draw):
    """A user question, then steps: an assistant turn (text, reasoning, calls) and one tool result per call."""
    msgs = [{"role": "user", "content": draw(texts)}]
    for s in range(draw(st.integers(1, 3))):
        calls = [{"id": f"c{s}_{k}", "type": "function",
                  "function": {"name": draw(names), "arguments": json.dumps(draw(arguments))}}
                 for k in range(draw(st.integers(0, 3)))]
        turn = {"role": "assistant", "content": draw(texts), "reasoning_content": draw(texts)}
        if calls:
            turn["tool_calls"] = calls
        msgs.append(turn)
        msgs += [{"role": "tool", "tool_call_id": c["id"], "content": draw(texts)} for c in calls]
    return msgs


def as_a_client_echoes(msgs, rng):
    """Reasoning dropped or renamed, arguments re-serialized, new call ids, results of a step re-ordered, text
    re-spaced, empty content as null."""
    out, ids = [], {}
    for m in msgs:
        m = dict(m)
        if m["role"] == "assistant":
            reasoning = m.pop("reasoning_content")
            choice = rng.choice(["drop", "reasoning", "thinking", "keep"])
            if choice != "drop":
                m["reasoning_content" if choice == "keep" else choice] = reasoning
            if m.get("tool_calls"):
                calls = []
                for c in m["tool_calls"]:
                    ids[c["id"]] = f"new-{len(ids)}"
                    calls.append({"id": ids[c["id"]], "type": "function", "function": {
                        "name": c["function"]["name"],
                        "arguments": json.dumps(json.loads(c["function"]["arguments"]), indent=rng.choice([None, 1]),
                                                sort_keys=rng.random() < 0.5, ensure_ascii=rng.random() < 0.5)}})
                m["tool_calls"] = calls
            m["content"] = (" " + m["content"] + "\n") if m["content"] else rng.choice([None, ""])
        elif m["role"] == "tool":
            m["tool_call_id"] = ids.get(m["tool_call_id"], m["tool_call_id"])
        out.append(m)
    result, k = [], 0
    while k < len(out):  # shuffle each run of tool results
        if out[k]["role"] != "tool":
            result.append(out[k])
            k += 1
            continue
        run = []
        while k < len(out) and out[k]["role"] == "tool":
            run.append(out[k])
            k += 1
        rng.shuffle(run)
        result += run
    return result


@settings(max_examples=150, deadline=None)
@given(conversations(), st.randoms(use_true_random=False))
def test_what_clients_do_to_a_history_keeps_the_fingerprints(msgs, rng):
    echoed = as_a_client_echoes(msgs, rng)
    before, after = context_fingerprints(msgs), context_fingerprints(echoed)
    for i, m in enumerate(msgs):
        if m["role"] == "assistant":
            assert before[i] == after[i]
            assert turn_fingerprint(m) == turn_fingerprint(echoed[i])
    assert before[-1] == after[-1]


@settings(max_examples=150, deadline=None)
@given(conversations(), st.data())
def test_a_visible_change_changes_the_fingerprints(msgs, data):
    turns = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
    i = data.draw(st.sampled_from(turns))
    changed = [dict(m) for m in msgs]
    what = data.draw(st.sampled_from(["content", "argument", "name", "earlier user"]))
    if what == "content" or not changed[i].get("tool_calls"):
        changed[i]["content"] = (changed[i]["content"] or "").strip() + " (edited)"
    elif what == "argument":
        calls = [dict(c, function=dict(c["function"])) for c in changed[i]["tool_calls"]]
        args = json.loads(calls[0]["function"]["arguments"])
        args["__edited"] = True
        calls[0]["function"]["arguments"] = json.dumps(args)
        changed[i]["tool_calls"] = calls
    elif what == "name":
        calls = [dict(c, function=dict(c["function"])) for c in changed[i]["tool_calls"]]
        calls[0]["function"]["name"] += "_v2"
        changed[i]["tool_calls"] = calls
    if what == "earlier user":
        changed[0]["content"] = changed[0]["content"].strip() + " (edited)"
        assert context_fingerprints(msgs)[i] != context_fingerprints(changed)[i]
    else:
        assert turn_fingerprint(msgs[i]) != turn_fingerprint(changed[i])
        assert context_fingerprints(msgs)[-1] != context_fingerprints(changed)[-1]


def test_a_parsed_output_can_be_recorded_as_the_turn():
    """``record`` takes the ParsedOutput the server parsed (as the OpenAI adapter writes it for the client)."""
    fmt = toolwire.get_format("qwen3")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    user = {"role": "user", "content": "Weather in Paris?"}
    out = fmt.parse('Need the tool.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}'
                    '\n</tool_call>', tools, thinking=True)
    keeper = HistoryKeeper(fmt)
    keeper.record([user], out, tools, thinking=True)
    message = out.to_openai_message()
    echoed = {k: v for k, v in message.items() if k != "reasoning_content"}
    restored = keeper.restore([user, echoed, {"role": "tool", "tool_call_id": "call_0", "content": "18C"}], tools,
                              thinking=True)
    assert restored.messages[1].reasoning_content == "Need the tool." == out.reasoning
