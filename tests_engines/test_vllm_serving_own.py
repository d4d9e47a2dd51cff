"""The same requests through vLLM's own renderer and parsers, for each family toolwire serves in
test_vllm_serving.py: ``vllm launch render`` with vLLM's Hugging Face renderer and the model's own chat template
(sent with each request, ``--trust-request-chat-template``), or vLLM's own DeepSeek V3.2 / V4 / V4.1 encoders
(their tokenizer modes), and vLLM's parsers for the family (hermes, qwen3_coder, deepseek_*).

Every difference from toolwire is put in a class, and the counts per family and class must be those of
``serving_expected.py``, which docs/engines.md ("vLLM's own renderer and parsers, through the server") lists and
explains: a difference that appears or goes away fails here.
"""

from __future__ import annotations

import json

import pytest

import toolwire
from conftest import REAL_TOKENIZER, golden_rows, hf_tokenizer, opens_reasoning
from serving import MODEL, RenderServer, chat_request, model_dir, own_args, own_key, own_template, record
from serving_expected import OWN_DERENDER, OWN_FAIL_CLOSED, OWN_RENDER
from test_vllm_serving import (FAMILIES, STREAM_CHUNK, WEATHER, derender_stream, derender_whole,
                               joined, render_rows, toolwire_ids, unusable_outputs)

GROUPS: dict[tuple, list[str]] = {}
for _family in FAMILIES:
    GROUPS.setdefault(own_key(_family), []).append(_family)


@pytest.fixture(scope="module", params=list(GROUPS), ids=lambda key: "+".join(GROUPS[key]))
def own(request, serving_root):
    families = GROUPS[request.param]
    root = serving_root
    server = RenderServer(model_dir(REAL_TOKENIZER[families[0]], root / "models"), own_args(families[0]),
                          root / f"server-own-{'+'.join(families)}.log").start()
    for family in families:
        record("server start (s)", family, own=round(server.started_in, 1))
    yield families, server
    server.stop()


def with_template(family: str, body: dict) -> dict:
    template = own_template(family)
    return dict(body, chat_template=template) if template else body


def render_class(family: str, row: dict, got: list[int]) -> str:
    """Why vLLM's ids differ from toolwire's: other text, or the same text tokenized otherwise, at request text
    that spells a marker (vLLM's path makes it that control token) or at template wording that is a control
    token of this tokenizer (the Qwen3 tokenizer standing in for Qwen2.5, which lacks <tool_response>)."""
    tokenizer = hf_tokenizer(REAL_TOKENIZER[family])
    request = row["request"]
    ours = toolwire.get_format(family).render_tokens(request["messages"], request["tools"], tokenizer, **row["options"])
    if tokenizer.decode(got, skip_special_tokens=False) != tokenizer.decode(ours.ids, skip_special_tokens=False):
        return "other text"
    at = next(i for i, (a, b) in enumerate(zip(ours.ids, got)) if a != b)
    return "marker in request text" if ours.content_mask[at] else "template text is a control token"


def test_own_renderer(own):
    families, server = own
    client = server.openai()
    wrong = {}
    for family in families:
        counts: dict[str, list] = {}
        rows = [row for row in render_rows(family) if "expected_error" not in row]
        for row in rows:
            try:
                got = client.post("/chat/completions/render", body=with_template(family, chat_request(row)),
                                  cast_to=object)["token_ids"]
            except Exception as exc:  # noqa: BLE001 - vLLM refusing a request toolwire renders is a difference
                cls = f"refused ({type(exc).__name__})"
            else:
                cls = "equal" if got == toolwire_ids(family, row) else render_class(family, row, got)
            counts.setdefault(cls, []).append(row["id"])
        record("vLLM's own renderer vs toolwire (Chat Completions)", family,
               total=len(rows), **{cls: len(ids) for cls, ids in counts.items()})
        found = {cls: len(ids) for cls, ids in counts.items() if cls != "equal"}
        if found != OWN_RENDER.get(family, {}):
            wrong[family] = {cls: ids for cls, ids in counts.items() if cls != "equal"}
    assert not wrong, wrong
def kind_of(got: tuple, want: tuple) -> str:
    return "+".join(name for name, g, w in zip(("content", "reasoning", "calls"), got, want) if g != w) or "equal"


def test_own_parsers(own):
    """Golden outputs after a prompt vLLM's own renderer made, through vLLM's own parsers, whole and streamed:
    which part differs from the vector's expectation (toolwire's equal it on every vector:
    test_vllm_serving.py)."""
    families, server = own
    client = server.openai()
    wrong = {}
    for family in families:
        tokenizer = hf_tokenizer(REAL_TOKENIZER[family])
        counts: dict[str, list] = {}
        for row in golden_rows(family):
            request = with_template(family, {
                "model": MODEL, "messages": [{"role": "user", "content": "Go."}],
                "chat_template_kwargs": {"thinking": opens_reasoning(row), "enable_thinking": opens_reasoning(row)}})
            if row["tools"]:
                request["tools"] = row["tools"]
            prompt = client.post("/chat/completions/render", body=request, cast_to=object)["token_ids"]
            ids = tokenizer.encode(row["model_output"], add_special_tokens=False)
            exp = row["expected"]
            want = (exp["content"], exp["reasoning"], [(c["name"], c["arguments"]) for c in exp["tool_calls"]])
            try:
                whole = derender_whole(server, request, prompt, ids).choices[0].message
                got = (whole.content or "", (whole.model_extra or {}).get("reasoning") or "",
                       [(c.function.name, json.loads(c.function.arguments)) for c in whole.tool_calls or ()])
                streamed = joined(derender_stream(server, request, prompt, ids, STREAM_CHUNK))
                got_stream = (streamed["content"], streamed["reasoning"],
                              [(c["name"], json.loads(c["arguments"] or "{}")) for c in streamed["calls"]])
            except Exception as exc:  # noqa: BLE001 - an error is a difference too
                kind = f"error ({type(exc).__name__})"
            else:
                kind = kind_of(got, want)
                if kind_of(got_stream, want) != kind:
                    kind = f"whole {kind}, streamed {kind_of(got_stream, want)}"
            counts.setdefault(kind, []).append(row["id"])
        record("vLLM's own parsers vs the golden expectation (derender, whole and streamed)", family,
               total=sum(len(v) for v in counts.values()), **{k: len(v) for k, v in counts.items()})
        if {k: len(v) for k, v in counts.items() if k != "equal"} != OWN_DERENDER.get(family, {}):
            wrong[family] = {k: v for k, v in counts.items() if k != "equal"}
    assert not wrong, wrong


def test_own_parsers_on_unusable_calls(own):
    """The fail-closed cases of test_vllm_serving.py through vLLM's own parser for the family: what its client
    sees (recorded beside toolwire's; the expected summary is serving_expected.OWN_FAIL_CLOSED)."""
    families, server = own
    client = server.openai()
    wrong = {}
    for family in families:
        tokenizer = hf_tokenizer(REAL_TOKENIZER[family])
        request = with_template(family, {"model": MODEL, "messages": [{"role": "user", "content": "Weather in Paris?"}],
                                         "tools": WEATHER,
                                         "chat_template_kwargs": {"thinking": False, "enable_thinking": False}})
        prompt = client.post("/chat/completions/render", body=request, cast_to=object)["token_ids"]
        seen = {}
        for case, (output, finish) in unusable_outputs(family).items():
            ids = tokenizer.encode(output, add_special_tokens=False)
            whole = derender_whole(server, request, prompt, ids, finish).choices[0]
            calls = [f"{c.function.name} {c.function.arguments}" for c in whole.message.tool_calls or ()]
            summary = {"non-streamed": (f"called {'; '.join(calls)}" if calls else "no call, text in content")
                       + f", finish {whole.finish_reason}"}
            streamed = joined(derender_stream(server, request, prompt, ids, 1, finish))
            calls = [f"{c['name']} {c['arguments']}" for c in streamed["calls"]]
            summary["streamed 1"] = (f"called {'; '.join(calls)}" if calls else "no call") + \
                f", finish {streamed['finish']}"
            record(f"fail-closed: vLLM's own {OWN_NAMES(family)} ({family})", case, **summary)
            seen[case] = summary
        if seen != OWN_FAIL_CLOSED.get(family):
            wrong[family] = seen
    assert not wrong, wrong


def OWN_NAMES(family: str) -> str:  # noqa: N802 - a label
    args = own_args(family)
    return "+".join(args[i + 1] for i, a in enumerate(args) if a in ("--tool-call-parser", "--reasoning-parser"))
