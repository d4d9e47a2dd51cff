"""toolwire rendering and parsing inside a real vLLM server: ``vllm launch render`` (CPU, no weights) with
``--tokenizer-mode toolwire_<f> --tool-call-parser toolwire_<f> --reasoning-parser toolwire_<f>``, one server
per family (module-scoped), driven with the ``openai`` and ``anthropic`` SDKs and httpx.

* render: every golden render vector of the family goes to ``/v1/chat/completions/render``; the token ids must
  equal toolwire's own ``render_tokens`` (a vector the reference refuses must be a 400). The same conversations
  as Responses (``/v1/responses/render``) and Anthropic Messages (``/v1/messages/render``) requests must
  render to the same ids, where the API can express them (what it cannot is counted, not passed).
* derender: every golden parse vector's output, as token ids, through ``/v1/chat/completions/derender``, whole
  and streamed (the stateless streaming protocol, several tokens per chunk), after a prompt the server rendered
  itself: content, reasoning and calls equal toolwire's ``parse``.
* fail-closed: unusable calls never reach the client as calls (docs/engines.md, "Fail-closed on the wire").
"""

from __future__ import annotations

import json

import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import toolwire
from conftest import REAL_TOKENIZER, golden_rows, hf_tokenizer, opens_reasoning, expected_calls
from serving import (FAMILIES, MODEL, NotExpressible, RenderServer, anthropic_request, chat_request, model_dir,
                     record, responses_request, template_kwargs, toolwire_args)

GOLDEN_RENDER = __import__("conftest").SHARED / "golden" / "render"
STREAM_CHUNK = 7  # tokens per streamed derender chunk (the protocol replays earlier chunks on every call)


def render_rows(family: str) -> list[dict]:
    path = GOLDEN_RENDER / f"{family}.jsonl"
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()] if path.exists() else []


@pytest.fixture(scope="module", params=FAMILIES)
def served(request, serving_root):
    family = request.param
    if not render_rows(family):
        pytest.fail(f"no golden render vectors for {family} at {GOLDEN_RENDER}")
    root = serving_root
    server = RenderServer(model_dir(REAL_TOKENIZER[family], root / "models"), toolwire_args(family),
                          root / f"server-toolwire_{family}.log").start()
    record("server start (s)", family, toolwire=round(server.started_in, 1))
    yield family, server
    server.stop()


def toolwire_ids(family: str, row: dict) -> list[int]:
    request = row["request"]
    return toolwire.get_format(family).render_tokens(request["messages"], request["tools"],
                                                     hf_tokenizer(REAL_TOKENIZER[family]), **row["options"]).ids


def test_chat_completions_render_equals_render_tokens(served):
    family, server = served
    client = server.openai()
    equal, differ, refused = 0, [], 0
    rows = render_rows(family)
    for row in rows:
        body = chat_request(row)
        if "expected_error" in row:
            with pytest.raises(toolwire.errors.ToolwireError):
                toolwire_ids(family, row)
            with pytest.raises(openai.BadRequestError):
                client.post("/chat/completions/render", body=body, cast_to=object)
            refused += 1
            continue
        got = client.post("/chat/completions/render", body=body, cast_to=object)["token_ids"]
        if got == toolwire_ids(family, row):
            equal += 1
        else:
            differ.append(row["id"])
    record("render: Chat Completions (equal / total)", family, equal=f"{equal + refused} / {len(rows)}",
           **{"both refuse": refused})
    assert not differ and equal + refused == len(rows)


def _other_api(family: str, server: RenderServer, api: str) -> None:
    client = server.openai() if api == "responses" else server.anthropic()
    build = responses_request if api == "responses" else anthropic_request
    path = "/responses/render" if api == "responses" else "/v1/messages/render"
    equal, differ, skipped = 0, [], {}
    rows = [row for row in render_rows(family) if "expected_error" not in row]
    for row in rows:
        try:
            body = build(row)
        except NotExpressible as why:
            skipped[str(why)] = skipped.get(str(why), 0) + 1
            continue
        got = client.post(path, body=body, cast_to=object)
        ids = got["token_ids"] if "token_ids" in got else got["engine_input"]["prompt_token_ids"]
        if ids == toolwire_ids(family, row):
            equal += 1
        else:
            differ.append(row["id"])
    expressible = len(rows) - sum(skipped.values())
    record(f"render: {'Responses' if api == 'responses' else 'Anthropic Messages'} (equal / expressible)", family,
           equal=f"{equal} / {expressible}", **{"not expressible": ", ".join(f"{k} {v}" for k, v in skipped.items())
                                                or "-"})
    assert not differ, differ
    assert equal == expressible > 0


def test_responses_render_as_its_chat_equivalent(served):
    _other_api(*served, "responses")


def test_anthropic_messages_render_as_its_chat_equivalent(served):
    _other_api(*served, "messages")


# ---------------------------------------------------------------- derender

def prompt_for(family: str, server: RenderServer, row: dict):
    """The chat request a golden output answers (one user turn, the vector's tools and thinking mode), the
    prompt ids the server renders for it (checked against toolwire's), and toolwire's RenderedPrompt."""
    messages = [{"role": "user", "content": "Go."}]
    request = {"model": MODEL, "messages": messages,
               "chat_template_kwargs": {"thinking": opens_reasoning(row), "enable_thinking": opens_reasoning(row)}}
    if row["tools"]:
        request["tools"] = row["tools"]
    ids = server.openai().post("/chat/completions/render", body=request, cast_to=object)["token_ids"]
    prompt = toolwire.get_format(family).render(messages, row["tools"], thinking=opens_reasoning(row))
    assert ids == prompt.token_ids(hf_tokenizer(REAL_TOKENIZER[family]))
    return request, ids, prompt


def derender_whole(server: RenderServer, request: dict, prompt: list[int], ids: list[int],
                   finish: str = "stop") -> ChatCompletion:
    body = {"model": MODEL, "prompt_token_ids": prompt, "chat_request": request,
            "generate_response": {"request_id": "r", "choices": [{"index": 0, "token_ids": ids,
                                                                  "finish_reason": finish}]}}
    return ChatCompletion.model_validate(server.openai().post("/chat/completions/derender", body=body, cast_to=object))


def derender_stream(server: RenderServer, request: dict, prompt: list[int], ids: list[int], size: int,
                    finish: str = "stop") -> list[ChatCompletionChunk]:
    client = server.openai()
    state, chunks = None, []
    cuts = [ids[i:i + size] for i in range(0, len(ids), size)] or [[]]
    for n, piece in enumerate(cuts):
        last = n == len(cuts) - 1
        body = {"model": MODEL, "stream": True, "prompt_token_ids": prompt, "chat_request": request,
                "stream_state": state,
                "generate_chunk": {"request_id": "r", "choices": [{"index": 0, "token_ids": piece,
                                                                   "finish_reason": finish if last else None}]}}
        answer = client.post("/chat/completions/derender", body=body, cast_to=object)
        state = answer["stream_state"]
        chunks.append(ChatCompletionChunk.model_validate(answer["chunk"]))
    return chunks


def joined(chunks: list[ChatCompletionChunk]) -> dict:
    """The chunks accumulated as a client does (content and reasoning joined, calls merged by index)."""
    content, reasoning, calls, finish, marker = [], [], {}, None, None
    for chunk in chunks:
        for choice in chunk.choices:
            delta = choice.delta
            content.append(delta.content or "")
            extra = delta.model_extra or {}
            reasoning.append(extra.get("reasoning") or "")
            marker = extra.get("toolwire") or marker
            for part in delta.tool_calls or ():
                call = calls.setdefault(part.index, {"ids": [], "name": None, "arguments": ""})
                if part.id:
                    call["ids"].append(part.id)
                if part.function and part.function.name:
                    assert call["name"] is None, "a call's name was sent twice"
                    call["name"] = part.function.name
                if part.function and part.function.arguments:
                    call["arguments"] += part.function.arguments
            finish = choice.finish_reason or finish
    return {"content": "".join(content), "reasoning": "".join(reasoning),
            "calls": [calls[i] for i in sorted(calls)], "finish": finish, "marker": marker}


def test_derender_golden_outputs(served):
    """Every golden parse vector's output, as token ids after a prompt the server rendered: whole, and streamed
    STREAM_CHUNK tokens per chunk, give toolwire's parse (content, reasoning, calls, one id per call)."""
    family, server = served
    tokenizer = hf_tokenizer(REAL_TOKENIZER[family])
    rows = golden_rows(family)
    wrong = []
    for row in rows:
        request, prompt, rendered = prompt_for(family, server, row)
        truth = toolwire.get_format(family).parse(row["model_output"], row["tools"], prompt=rendered)
        want_calls = expected_calls(truth)
        ids = tokenizer.encode(row["model_output"], add_special_tokens=False)
        whole = derender_whole(server, request, prompt, ids).choices[0]
        got_whole = (whole.message.content or "", (whole.message.model_extra or {}).get("reasoning") or "",
                     [(c.function.name, json.loads(c.function.arguments)) for c in whole.message.tool_calls or ()])
        streamed = joined(derender_stream(server, request, prompt, ids, STREAM_CHUNK))
        got_stream = (streamed["content"], streamed["reasoning"],
                      [(c["name"], json.loads(c["arguments"])) for c in streamed["calls"]])
        want = (truth.content, truth.reasoning, want_calls)
        if got_whole != want or got_stream != want or any(len(c["ids"]) != 1 for c in streamed["calls"]):
            wrong.append((row["id"], got_whole, got_stream, want))
        if want_calls and (whole.finish_reason, streamed["finish"]) != ("tool_calls", "tool_calls"):
            wrong.append((row["id"], "finish_reason", whole.finish_reason, streamed["finish"]))
    record("derender: golden outputs (equal / total, whole and streamed)", family,
           equal=f"{len(rows) - len({w[0] for w in wrong})} / {len(rows)}")
    assert not wrong, wrong[:5]


# ---------------------------------------------------------------- fail-closed on the wire

WEATHER = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                             "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                            "required": ["city"]}}}]
LEAD = "Let me check."


def call_output(family: str, name: str) -> str:
    """What the model writes for ``LEAD`` and one call of ``name`` with ``{"city": "Paris"}``: the family's own
    rendering of that assistant turn (the render with the turn less the render without it, less the stop token)."""
    fmt = toolwire.get_format(family)
    user = [{"role": "user", "content": "Weather in Paris?"}]
    turn = {"role": "assistant", "content": LEAD, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": name, "arguments": '{"city": "Paris"}'}}]}
    before = fmt.render(user, WEATHER, thinking=False).text  # the requests below ask for no thinking
    after = fmt.render(user + [turn], WEATHER, add_generation_prompt=False, thinking=False).text
    if not after.startswith(before):  # DeepSeek-R1 renders history without the prompt's "<think>\n"
        from toolwire.grammar.engines import call_boundaries

        tool = {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
        begin, end, trigger = call_boundaries(family, tool)
        return "\n</think>\n\n" + LEAD + trigger + begin + '{"city": "Paris"}' + end + fmt.markers["calls_end"]
    out = after[len(before):].rstrip("\n")
    for stop in fmt.stop_tokens:
        out = out[:-len(stop)] if out.endswith(stop) else out
    return out


def unusable_outputs(family: str) -> dict[str, tuple[str, str]]:
    """The issue's three unusable calls, written in the family's syntax: case -> (output, engine finish)."""
    good = call_output(family, "get_weather")
    cases = {"unknown tool get_wether": (call_output(family, "get_wether"), "stop")}
    if '{"city": "Paris"}' in good:  # the JSON-bodied families
        cases["arguments {city: 'Paris'} (not JSON)"] = (good.replace('{"city": "Paris"}', "{city: 'Paris'}"), "stop")
    cases["cut off inside the arguments"] = (good[:good.index("Paris") + 3], "length")
    return cases


def content_then_call(family: str, output: str, prompt) -> str:
    """What the content must be when the output's call is not a call: the content toolwire's parse gives before
    the call (the call's name declared, so it is a call there), then the rest of the output as the model wrote it."""
    tools = WEATHER + [{"type": "function", "function": {"name": "get_wether", "parameters": {"type": "object"}}}]
    before = toolwire.get_format(family).parse(output, tools, prompt=prompt).content
    at = output.index(before) + len(before) if before else len(output) - len(output.lstrip())
    if not before:
        closer = toolwire.get_format(family).markers.get("think_close", "")
        at = output.index(closer) + len(closer) if closer and closer in output else 0
        at += len(output[at:]) - len(output[at:].lstrip())
    return before + output[at:]


def test_fail_closed_on_the_wire(served):
    """An unknown tool, arguments that are not JSON, a call cut off: never a usable call on the wire. Whole:
    no tool call, the call's text in the content, ``finish_reason`` stop (length when cut off). Streamed at 1
    and 3 tokens per chunk: an undeclared call never starts; a started call that ends unusable keeps arguments
    that are not complete JSON, its text goes to the content, and the last delta carries the ``toolwire``
    marker naming it; the content equals the whole response's. A usable call goes through as a call."""
    family, server = served
    tokenizer = hf_tokenizer(REAL_TOKENIZER[family])
    request = {"model": MODEL, "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": WEATHER,
               "chat_template_kwargs": {"thinking": False, "enable_thinking": False}}
    prompt = server.openai().post("/chat/completions/render", body=request, cast_to=object)["token_ids"]
    rendered = toolwire.get_format(family).render(request["messages"], WEATHER, thinking=False)

    good = call_output(family, "get_weather")
    ids = tokenizer.encode(good, add_special_tokens=False)
    whole = derender_whole(server, request, prompt, ids).choices[0]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in whole.message.tool_calls] == \
        [("get_weather", {"city": "Paris"})]
    assert whole.finish_reason == "tool_calls" and whole.message.tool_calls[0].id.startswith("chatcmpl-tool-")
    for size in (1, 3):
        streamed = joined(derender_stream(server, request, prompt, ids, size))
        assert [(c["name"], json.loads(c["arguments"])) for c in streamed["calls"]] == [("get_weather",
                                                                                          {"city": "Paris"})]
        assert streamed["finish"] == "tool_calls" and streamed["marker"] is None

    for case, (output, finish) in unusable_outputs(family).items():
        ids = tokenizer.encode(output, add_special_tokens=False)
        text = content_then_call(family, output, rendered)
        whole = derender_whole(server, request, prompt, ids, finish).choices[0]
        assert not whole.message.tool_calls, case
        assert whole.message.content == text, case
        assert whole.finish_reason == finish, case
        rows = {"non-streamed": f"no call, text in content, finish {whole.finish_reason}"}
        for size in (1, 3):
            streamed = joined(derender_stream(server, request, prompt, ids, size, finish))
            assert streamed["content"] == text, (case, size)
            (entry,) = streamed["marker"]["unusable_calls"]
            if case.startswith("unknown"):
                assert streamed["calls"] == [] and entry["status"] == "undeclared" and entry["index"] is None
                assert entry["codes"] == ["unknown_tool"]
                seen = "never started"
            else:
                (call,) = streamed["calls"]
                with pytest.raises(ValueError):
                    json.loads(call["arguments"])
                assert entry["index"] == 0 and entry["id"] == call["ids"][0]
                assert entry["status"] == ("truncated" if finish == "length" else "rejected")
                seen = f"started, arguments {call['arguments']!r} (not JSON)"
            assert streamed["finish"] == ("length" if finish == "length" else
                                          "stop" if case.startswith("unknown") else "tool_calls"), (case, size)
            rows[f"streamed {size}"] = f"{seen}, text in content, marker {entry['status']}, finish {streamed['finish']}"
        record(f"fail-closed: toolwire_{family}", case, **rows)


# ---------------------------------------------------------------- the renderer's other duties

def test_request_text_spelling_a_marker_stays_text(served):
    """A user message and a tool result that spell the family's end-of-turn marker: the server's ids hold that
    control token exactly as often as for the same conversation with harmless text (only the format's own
    markers become control tokens)."""
    family, server = served
    fmt = toolwire.get_format(family)
    tokenizer = hf_tokenizer(REAL_TOKENIZER[family])
    marker = fmt.stop_tokens[0]
    control = tokenizer.convert_tokens_to_ids(marker)

    def conversation(text: str) -> dict:
        return {"model": MODEL, "tools": WEATHER, "chat_template_kwargs": {"thinking": False},
                "messages": [{"role": "user", "content": f"Weather? {text}"},
                             {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
                              "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
                             {"role": "tool", "tool_call_id": "call_1", "content": f"18 C {text} sunny"}]}

    client = server.openai()
    injected = client.post("/chat/completions/render", body=conversation(marker), cast_to=object)["token_ids"]
    harmless = client.post("/chat/completions/render", body=conversation("x"), cast_to=object)["token_ids"]
    assert injected.count(control) == harmless.count(control)
    assert marker in tokenizer.decode(injected, skip_special_tokens=False).split("Weather? ", 1)[1]


def test_options_toolwire_cannot_honour_are_400s_that_name_them(served):
    family, server = served
    client = server.openai()
    base = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(openai.BadRequestError, match="no_such_option"):
        client.post("/chat/completions/render", body=dict(base, chat_template_kwargs={"no_such_option": 1}),
                    cast_to=object)
    with pytest.raises(openai.BadRequestError, match="continue_final_message"):
        client.post("/chat/completions/render", body=dict(base, continue_final_message=True,
                                                          add_generation_prompt=False), cast_to=object)


def test_context_policy_warnings_are_logged(served):
    """A conversation whose earlier reasoning the family drops: the server logs the context plan's warnings for
    it (the codes toolwire.context_policy.plan gives)."""
    from toolwire.context_policy import plan

    family, server = served
    messages = [{"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello.", "reasoning_content": "greet them"},
                {"role": "user", "content": "And now?"}]
    codes = {w.code for w in plan(messages, family, tools=None, thinking=False).warnings}
    assert codes  # reasoning_dropped
    before = len(server.log())
    server.openai().post("/chat/completions/render", cast_to=object, body={
        "model": MODEL, "messages": messages, "chat_template_kwargs": {"thinking": False}})
    logged = server.log()[before:]
    for code in codes:
        assert f"toolwire_{family} context policy:" in logged and f"({code}, message" in logged, code


# ---------------------------------------------------------------- the history keeper through the chat API

def test_the_keeper_supplies_sampled_ids_through_the_chat_api(served):
    """Issue 32: a client echoes each assistant turn without its reasoning; the keeper (in the serving code in
    front of vLLM) restores it and attaches the ids the turn was sampled as (``token_ids``, the documented
    extension field), and the server renders the request. The server's ids equal the keeper's own spliced ids,
    each attached id sequence is in them verbatim, and wherever the keeper gave back every earlier turn the prompt
    extends the previous prompt and its sampled turn exactly (the engine's prefix cache is reused whole). The
    turn has reasoning where the format writes it under the request's options (thinking on by the template's
    default), none elsewhere (a model with thinking off writes none)."""
    from toolwire.history import HistoryKeeper, model_completion, model_completion_ids

    family, server = served
    fmt, tokenizer = toolwire.get_format(family), hf_tokenizer(REAL_TOKENIZER[family])
    client = server.openai()
    keeper = HistoryKeeper(fmt)
    sent = [{"role": "user", "content": "Weather in Paris, then Lyon, then Nice?"}]
    cached = None
    extended = 0
    for k, city in enumerate(["Paris", "Lyon", "Nice"]):
        prepared = keeper.prepare(sent, WEATHER, tokenizer=tokenizer)
        messages = [m.model_dump(exclude_none=True, mode="json") for m in prepared.messages]
        body = {"model": MODEL, "messages": messages, "tools": WEATHER,
                "chat_template_kwargs": template_kwargs(prepared.options)}
        ids = client.post("/chat/completions/render", body=body, cast_to=object)["token_ids"]
        assert ids == prepared.ids, (family, k)
        attached = [m["token_ids"] for m in messages if "token_ids" in m]
        for sampled in attached:
            assert any(ids[i:i + len(sampled)] == sampled for i in range(len(ids) - len(sampled) + 1)), (family, k)
        if k and len(attached) == k and not prepared.refused:
            assert ids[:len(cached)] == cached, (family, k)
            extended += 1
        turn = {"role": "assistant", "content": "", "reasoning_content": f"The user wants {city}'s weather.",
                "tool_calls": [{"id": f"call{k}", "type": "function",
                                "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}]}
        if turn["reasoning_content"] not in model_completion(fmt, prepared.messages, turn, WEATHER, **prepared.options):
            del turn["reasoning_content"]
        completion = model_completion_ids(fmt, prepared.messages, turn, WEATHER, tokenizer, **prepared.options)
        keeper.record(prepared.messages, turn, WEATHER, token_ids=completion, **prepared.options)
        cached = ids + completion
        echoed = {key: value for key, value in turn.items() if key != "reasoning_content"}
        sent = sent + [echoed, {"role": "tool", "tool_call_id": f"call{k}", "content": f"sunny in {city}"}]
    record("keeper: requests extending the previous prompt + turn (of 2)", family, toolwire=extended)
