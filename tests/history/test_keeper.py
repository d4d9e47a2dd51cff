"""The history keeper (toolwire.history.HistoryKeeper): what a client does to an echoed history, and what the
keeper gives back, on every store against its real backend (a dict, a SQLite file, a redis-server on loopback).

Each restoration is checked on the prompt itself: the restored request renders exactly as the history the model
produced (the reasoning it wrote) renders, and a request the keeper must not touch renders exactly as sent.
"""

from __future__ import annotations

import threading

import pytest

import toolwire
from support.history_stores import STORES, make_store, redis_server  # noqa: F401 - the fixture
from toolwire.history import HistoryKeeper, MemoryStore, splice_token_ids
from toolwire.tokenize import load_tokenizer, vocabulary

from support import REAL, require_shared

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                            "parameters": {"type": "object", "properties": {
                                                "city": {"type": "string"}}, "required": ["city"]}}}]
FAMILY = "qwen36"  # keeps the reasoning of the current tool loop; preserve_thinking=True keeps all
OPTS = {"thinking": True}


def call(call_id: str, city: str, spacing: str = " ") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": "get_weather",
                                                            "arguments": f'{{"city":{spacing}"{city}"}}'}}


def turn(reasoning: str, *calls, content: str = "") -> dict:
    out = {"role": "assistant", "content": content, "reasoning_content": reasoning}
    if calls:
        out["tool_calls"] = list(calls)
    return out


def echoed(message: dict, **changes) -> dict:
    """The message as a client echoes it: without ``reasoning_content``, with ``changes``."""
    out = {k: v for k, v in message.items() if k != "reasoning_content"}
    out.update(changes)
    return out


def result(call_id: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def render(messages, **options):
    return toolwire.get_format(FAMILY).render(messages, TOOLS, **{**OPTS, **options}).text


@pytest.fixture(params=STORES)
def keeper(request, tmp_path):
    return HistoryKeeper(FAMILY, make_store(request.param, request, tmp_path))


USER = {"role": "user", "content": "Weather in Paris and Rome?"}
T1 = turn("I need both cities.", call("call_a1", "Paris"), call("call_a2", "Rome"))


def test_dropped_reasoning_is_restored(keeper):
    keeper.record([USER], T1, TOOLS, **OPTS)
    produced = [USER, T1, result("call_a1", "18C"), result("call_a2", "21C")]
    sent = [USER, echoed(T1), *produced[2:]]
    assert render(sent) != render(produced)  # what dropping it costs: the render changes
    restored = keeper.restore(sent, TOOLS, **OPTS)
    assert [(r.message_index, r.how, r.chars) for r in restored.restored] == [(1, "dropped", len(T1["reasoning_content"]))]
    assert restored.changed and restored.skipped == []
    assert render(restored.messages) == render(produced)
    # an empty string is what some clients send for "none": restored too
    restored = keeper.restore([USER, {**echoed(T1), "reasoning_content": ""}, *produced[2:]], TOOLS, **OPTS)
    assert [r.how for r in restored.restored] == ["dropped"] and render(restored.messages) == render(produced)


@pytest.mark.parametrize("name", ["reasoning", "thinking"])
def test_renamed_reasoning_is_reported_and_respaced_reasoning_restored(keeper, name):
    keeper.record([USER], T1, TOOLS, **OPTS)
    produced = [USER, T1, result("call_a1", "18C"), result("call_a2", "21C")]
    renamed = [USER, echoed(T1, **{name: T1["reasoning_content"]}), *produced[2:]]
    restored = keeper.restore(renamed, TOOLS, **OPTS)
    assert [(r.how, r.field) for r in restored.restored] == [("renamed", name)] and not restored.changed
    assert render(restored.messages) == render(produced)
    assert name not in (restored.messages[1].model_extra or {})  # one field now: reasoning_content
    respaced = [USER, echoed(T1, **{name: "  " + T1["reasoning_content"] + "\n"}), *produced[2:]]
    restored = keeper.restore(respaced, TOOLS, **OPTS)
    assert [(r.how, r.field) for r in restored.restored] == [("rewritten", name)]
    assert restored.messages[1].reasoning_content == T1["reasoning_content"]


def test_respaced_reasoning_is_restored_where_the_template_writes_it_verbatim():
    """Qwen strips reasoning when it renders it; DeepSeek V4 writes it as given, so a client that re-spaces it
    changes the prompt, and the keeper puts the model's own text back."""
    fmt = toolwire.get_format("deepseek_v4")
    keeper = HistoryKeeper(fmt)
    keeper.record([USER], T1, TOOLS, **OPTS)
    produced = [USER, T1, result("call_a1", "18C"), result("call_a2", "21C")]
    respaced = [USER, echoed(T1, reasoning="  " + T1["reasoning_content"] + "\n"), *produced[2:]]
    assert fmt.render(respaced, TOOLS, **OPTS).text != fmt.render(produced, TOOLS, **OPTS).text
    restored = keeper.restore(respaced, TOOLS, **OPTS)
    assert [(r.how, r.field) for r in restored.restored] == [("rewritten", "reasoning")]
    assert fmt.render(restored.messages, TOOLS, **OPTS).text == fmt.render(produced, TOOLS, **OPTS).text


def test_a_client_that_reorders_tool_results_and_respells_arguments(keeper):
    """Turn 2 was produced after the results in one order; the client sends them in the other order, and writes
    the arguments without spaces: both turns are still found."""
    keeper.record([USER], T1, TOOLS, **OPTS)
    step2 = [USER, T1, result("call_a1", "18C"), result("call_a2", "21C")]
    t2 = turn("Now compare them.", call("call_b1", "Paris"))
    keeper.record(keeper.restore([USER, echoed(T1), *step2[2:]], TOOLS, **OPTS).messages, t2, TOOLS, **OPTS)
    sent = [USER, echoed(T1, tool_calls=[call("call_a1", "Paris", ""), call("call_a2", "Rome", "")]),
            result("call_a2", "21C"), result("call_a1", "18C"), echoed(t2), result("call_b1", "18C")]
    restored = keeper.restore(sent, TOOLS, **OPTS)
    assert [(r.message_index, r.how) for r in restored.restored] == [(1, "dropped"), (4, "dropped")]
    expected = [USER, {**sent[1], "reasoning_content": T1["reasoning_content"]}, *sent[2:4],
                {**sent[4], "reasoning_content": t2["reasoning_content"]}, sent[5]]
    assert render(restored.messages) == render(expected)


def test_a_foreign_conversation_with_the_same_visible_text_gets_nothing(keeper):
    """Another conversation whose assistant turn is visibly the same (same text, calls and even call ids) is not
    this one: nothing is restored and its prompt is exactly as sent. So is an edited (stale) turn."""
    keeper.record([USER], T1, TOOLS, **OPTS)
    other_user = {"role": "user", "content": "Weather in Paris and Rome, please."}
    foreign = [other_user, echoed(T1), result("call_a1", "18C"), result("call_a2", "21C")]
    restored = keeper.restore(foreign, TOOLS, **OPTS)
    assert restored.restored == [] and [(s.message_index, s.reason) for s in restored.skipped] == [(1, "not_recorded")]
    assert render(restored.messages) == render(foreign)
    stale = [USER, echoed(T1, tool_calls=[call("call_a1", "Paris")]), result("call_a1", "18C")]  # one call removed
    assert keeper.restore(stale, TOOLS, **OPTS).restored == []
    # an entry planted under this turn's key but written for another context is refused by its fingerprints
    from toolwire.history.keeper import _pack
    from toolwire.history.visible import context_fingerprints, turn_fingerprint

    msgs = [other_user, echoed(T1)]
    key = keeper._turn_key(context_fingerprints(msgs)[1], turn_fingerprint(msgs[1]))
    keeper.store.put(key, _pack({"v": 1, "format": FAMILY, "context": "0" * 64, "turn": turn_fingerprint(msgs[1]),
                                 "reasoning": "planted", "content": "", "calls": [], "token_ids": None}))
    assert keeper.restore(foreign, TOOLS, **OPTS).restored == []


def test_a_full_store_evicts_without_error(request, tmp_path):
    for kind in STORES:
        folder = tmp_path / kind
        folder.mkdir()
        keeper = HistoryKeeper(FAMILY, make_store(kind, request, folder, max_entries=6))
        history = [USER]
        turns = []
        for n in range(12):  # each record writes two entries (the turn and the conversation's latest request)
            t = turn(f"Step {n}.", call(f"c{n}", f"City {n}"))
            keeper.record(keeper.restore(history, TOOLS, **OPTS).messages, t, TOOLS, **OPTS)
            turns.append(t)
            history = history + [echoed(t), result(f"c{n}", f"{n}C")]
        stats = keeper.store.stats()
        assert stats.entries <= 6 and stats.evicted > 0
        restored = keeper.restore(history, TOOLS, **OPTS)
        got = {r.message_index for r in restored.restored}
        assert got and 2 * 11 + 1 in got  # the newest turns are there; the evicted ones are simply not restored
        lost = {s.message_index for s in restored.skipped if s.reason == "not_recorded"}
        assert lost and lost | got == {1 + 2 * n for n in range(12)}
        for index in got:
            assert restored.messages[index].reasoning_content == turns[(index - 1) // 2]["reasoning_content"]


def test_two_concurrent_conversations_keep_their_own_reasoning(keeper):
    """Two conversations, run at once on two threads against one keeper, with the very same assistant turns
    (text, calls, ids) but different reasoning: each gets its own back, every step."""
    errors: list[str] = []

    def conversation(tag: str, question: str) -> None:
        history = [{"role": "user", "content": question}]
        for n in range(8):
            t = turn(f"{tag} reasons about step {n}.", call(f"call_{n}", f"City {n}"))
            restored = keeper.restore(history, TOOLS, **OPTS)
            for m in restored.messages:
                if m.role == "assistant" and not (m.reasoning_content or "").startswith(tag):
                    errors.append(f"{tag} got {m.reasoning_content!r}")
            if len(restored.restored) != n:
                errors.append(f"{tag} step {n}: restored {len(restored.restored)}")
            keeper.record(restored.messages, t, TOOLS, **OPTS)
            history = history + [echoed(t), result(f"call_{n}", f"{n}C")]

    threads = [threading.Thread(target=conversation, args=("Alpha", "Plan route A.")),
               threading.Thread(target=conversation, args=("Beta", "Plan route B."))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_only_reasoning_the_policy_renders_is_restored_and_the_stable_mode_keeps_it():
    """After a new user message Qwen3.6 drops earlier reasoning: nothing to restore there (``policy_drops``).
    With ``retention="stable"`` the keeper renders with ``preserve_thinking=True`` (the template's own switch),
    which keeps it, and restores it."""
    for retention, expect in (("template", "policy_drops"), ("stable", None)):
        keeper = HistoryKeeper(FAMILY, MemoryStore(), retention=retention)
        opts = keeper.render_options(OPTS)
        answer = turn("Summarise.", content="Paris 18C, Rome 21C.")
        keeper.record([USER, T1, result("call_a1", "18C"), result("call_a2", "21C")], answer, TOOLS, **opts)
        sent = [USER, T1, result("call_a1", "18C"), result("call_a2", "21C"), echoed(answer),
                {"role": "user", "content": "And tomorrow?"}]
        restored = keeper.restore(sent, TOOLS, **opts)
        if expect:
            assert [(s.message_index, s.reason) for s in restored.skipped if s.message_index == 4] == [(4, expect)]
            assert render(restored.messages, **opts) == render(sent, **opts)
        else:
            assert [(r.message_index, r.how) for r in restored.restored] == [(4, "dropped")]
            assert opts == {**OPTS, "preserve_thinking": True}
            assert answer["reasoning_content"] in render(restored.messages, **opts)


def test_reasoning_the_client_changed_is_left_alone():
    keeper = HistoryKeeper(FAMILY)
    keeper.record([USER], T1, TOOLS, **OPTS)
    sent = [USER, {**T1, "reasoning_content": "A summary the client wrote."}, result("call_a1", "18C"),
            result("call_a2", "21C")]
    restored = keeper.restore(sent, TOOLS, **OPTS)
    assert restored.restored == [] and [s.reason for s in restored.skipped] == ["client_reasoning_differs"]
    assert render(restored.messages) == render(sent)


def test_call_ids_find_a_turn_after_an_edit_before_it_only_when_trusted():
    """The client edited the system prompt: the context before the turn changed. With ``trust_call_ids`` (the
    server mints unique ids) the turn is found by its call id, its visible turn still checked; without, not."""
    system = {"role": "system", "content": "You are terse."}
    edited = {"role": "system", "content": "You are very terse."}
    for trusted in (True, False):
        keeper = HistoryKeeper(FAMILY, trust_call_ids=trusted)
        keeper.record([system, USER], T1, TOOLS, **OPTS)
        sent = [edited, USER, echoed(T1), result("call_a1", "18C"), result("call_a2", "21C")]
        restored = keeper.restore(sent, TOOLS, **OPTS)
        assert [(r.how, r.found_by) for r in restored.restored] == ([("dropped", "call_id")] if trusted else [])
        changed_call = [edited, USER, echoed(T1, tool_calls=[call("call_a1", "Lyon"), call("call_a2", "Rome")])]
        assert keeper.restore(changed_call, TOOLS, **OPTS).restored == []  # same ids, another visible turn


def test_recorded_token_ids_are_attached_and_splice():
    """Record the ids the turn was sampled as; restore(token_ids=True) attaches them, and the spliced prompt holds
    them exactly (the keeper supplies what a token-faithful render needs)."""
    require_shared()
    tok = load_tokenizer(str(REAL / "tokenizers" / "Qwen3"))
    fmt = toolwire.get_format(FAMILY)
    keeper = HistoryKeeper(fmt)
    vocab = vocabulary(tok)
    t1 = turn("I need both cities.", call("call_a1", "Paris"))
    produced = fmt.render([USER, t1], TOOLS, add_generation_prompt=False, **OPTS).text
    start = len(fmt.render([USER], TOOLS, **OPTS).text)
    completion = produced[start:produced.rindex("<|im_end|>") + len("<|im_end|>")]
    sampled, pos = [], 0
    for m in vocab.find_controls(completion):  # markers as control ids, the text one character at a time
        sampled += [t for ch in completion[pos:m.start()] for t in vocab.encode_plain(ch)] + [vocab.control[m.group()]]
        pos = m.end()
    keeper.record([USER], t1, TOOLS, token_ids=sampled, **OPTS)
    sent = [USER, echoed(t1), result("call_a1", "18C")]
    restored = keeper.restore(sent, TOOLS, token_ids=True, **OPTS)
    assert [(r.how, r.token_ids) for r in restored.restored] == [("dropped", True)]
    spliced = splice_token_ids(fmt, restored.messages, TOOLS, tok, **OPTS)
    [splice] = spliced.splices
    assert spliced.ids[splice.start:splice.end] == sampled and splice.bridged
    assert spliced.ids[:splice.start] == fmt.render([USER], TOOLS, **OPTS).token_ids(tok)
    assert spliced.ids != fmt.render(restored.messages, TOOLS, **OPTS).token_ids(tok)  # not a re-tokenisation


def test_prepare_and_record_in_a_serving_loop_keep_every_prompt_a_continuation_of_the_sampled_ids():
    """What a serving integration does: prepare (restore, render, splice), generate, record. The client drops every
    reasoning; each next prompt's ids start with the previous prompt's ids followed by exactly the ids sampled."""
    require_shared()
    tok = load_tokenizer(str(REAL / "tokenizers" / "Qwen3"))
    fmt = toolwire.get_format(FAMILY)
    vocab = vocabulary(tok)
    keeper = HistoryKeeper(fmt)
    sent, cached = [USER], None
    for n in range(4):
        prepared = keeper.prepare(sent, TOOLS, tokenizer=tok, **OPTS)
        assert prepared.refused == [] and len(prepared.splices) == n
        if cached is not None:
            assert prepared.ids[:len(cached)] == cached
        t = turn(f"Step {n}: look up city {n}.", call(f"id{n}", f"City {n}"))
        text = fmt.render([*prepared.messages, t], TOOLS, add_generation_prompt=False, **OPTS).text
        text = text[len(prepared.prompt.text):text.rindex("<|im_end|>") + len("<|im_end|>")]
        sampled, pos = [], 0  # "sampled": text one character at a time, markers as control ids
        for m in vocab.find_controls(text):
            sampled += [i for ch in text[pos:m.start()] for i in vocab.encode_plain(ch)] + [vocab.control[m.group()]]
            pos = m.end()
        keeper.record(prepared.messages, t, TOOLS, token_ids=sampled, **prepared.options)
        cached = prepared.ids + sampled
        sent = sent + [echoed(t), result(f"id{n}", f"{n}C")]
    # ids the client sends itself (the token_ids extension field) are kept over the recorded ones
    own = [{**m, "token_ids": [1, 2, 3]} if m.get("role") == "assistant" and m is sent[1] else m for m in sent]
    prepared = keeper.prepare(own, TOOLS, tokenizer=tok, **OPTS)
    assert [(e.reason, e.message_index) for e in prepared.refused] == [("text_mismatch", 1)]


def test_a_store_that_cannot_be_read_leaves_the_request_as_sent():
    """A Redis server that is down (nothing listens on the port): restore and prepare go on with the request as
    sent, each assistant turn reported as ``store_error``; stability says so; record raises the client's error."""
    redis = pytest.importorskip("redis")
    from support.history_stores import _free_port
    from toolwire.history import RedisStore

    keeper = HistoryKeeper(FAMILY, RedisStore(redis.Redis(host="127.0.0.1", port=_free_port(),
                                                          socket_connect_timeout=1)), trust_call_ids=True)
    sent = [USER, echoed(T1), result("call_a1", "18C"), result("call_a2", "21C")]
    restored = keeper.restore(sent, TOOLS, **OPTS)
    assert restored.restored == [] and [(s.message_index, s.reason) for s in restored.skipped] == [(1, "store_error")]
    assert render(restored.messages) == render(sent)
    assert keeper.prepare(sent, TOOLS, **OPTS).prompt.text == render(sent)
    assert keeper.stability(sent, TOOLS, **OPTS).cause == "store_error"
    with pytest.raises(redis.ConnectionError):
        keeper.record(sent, T1, TOOLS, **OPTS)


def test_prepare_hands_on_no_recorded_ids_that_do_not_splice():
    """DeepSeek R1's template re-renders an earlier turn without the ``<think>`` its prompt opened, so the ids the
    turn was sampled as cannot continue that prompt (``history_rerendered``): prepare tokenises the turn as usual,
    names it in ``refused``, and the messages it hands on no longer carry the ids (a server that splices them,
    vLLM's renderer, would refuse the request); ids the client sent itself are left as sent."""
    require_shared()
    from toolwire.history import model_completion_ids

    tok = load_tokenizer(str(REAL / "tokenizers" / "DeepSeek-V3"))
    fmt = toolwire.get_format("deepseek_r1")
    keeper = HistoryKeeper(fmt)
    first = keeper.prepare([USER], TOOLS, tokenizer=tok)
    t1 = {"role": "assistant", "content": "", "tool_calls": [call("call_a1", "Paris")]}
    sampled = model_completion_ids(fmt, first.messages, t1, TOOLS, tok, **first.options)
    keeper.record(first.messages, t1, TOOLS, token_ids=sampled, **first.options)
    sent = [USER, t1, result("call_a1", "18C")]
    assert keeper.restore(sent, TOOLS, token_ids=True).messages[1].__pydantic_extra__["token_ids"] == sampled
    prepared = keeper.prepare(sent, TOOLS, tokenizer=tok)
    assert [(e.message_index, e.reason) for e in prepared.refused] == [(1, "history_rerendered")]
    assert "token_ids" not in (prepared.messages[1].__pydantic_extra__ or {})
    assert prepared.ids == fmt.render(sent, TOOLS).token_ids(tok)
    from_client = keeper.prepare([USER, dict(t1, token_ids=sampled), result("call_a1", "18C")], TOOLS, tokenizer=tok)
    assert [e.message_index for e in from_client.refused] == [1]
    assert from_client.messages[1].__pydantic_extra__["token_ids"] == sampled
