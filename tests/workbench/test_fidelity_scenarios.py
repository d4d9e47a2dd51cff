"""``toolwire fidelity`` for hermes3, granite4 (4.1 and 4.0), llama32, llama4 and ministral3: every built-in
scenario matches its official template in bytes (with the real Llama tokenizers, in tokens too) and reads
back. Llama 3.2 differs only where its template prints content parts as a Python list (as Llama 3.1 does)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from support import REAL, require_shared
from toolwire.workbench.fidelity import Comparer, builtin_corpus_path, load_scenarios
from toolwire.templates.jinja import ChatTemplate
from toolwire.tokenize import load_tokenizer

DATE = "2025-03-14"
SCENARIOS = load_scenarios(builtin_corpus_path())
CASES = [  # format, template, tokenizer, extra scenario options, scenarios the template loses data in
    ("hermes3", "Hermes-3-Llama-3.1-8B-tool_use", None, {}, set()),
    ("granite4", "Granite-4.1", None, {}, set()),
    ("granite4", "Granite-4.0", None, {"version": "4.0"}, set()),
    ("llama32", "Llama-3.2-3B-Instruct", "Llama-3", {}, {"content_parts"}),
    ("llama4", "Llama-4-transformers-default", "Llama-4", {}, set()),
    ("ministral3", "Ministral-3-14B-Reasoning-2512", None, {}, set()),
]
BOS = {"hermes3": "<|begin_of_text|>", "llama32": "<|begin_of_text|>", "llama4": "<|begin_of_text|>",
       "ministral3": "<s>"}
EOS = {"llama32": "<|eot_id|>", "llama4": "<|eot|>", "ministral3": "</s>"}


@pytest.mark.parametrize("fmt,template,tokenizer,options,lossy", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_every_scenario_matches_the_official_template(fmt, template, tokenizer, options, lossy):
    require_shared()
    pytest.importorskip("tiktoken")
    tokens = {k: v for k, v in (("bos_token", BOS.get(fmt)), ("eos_token", EOS.get(fmt))) if v}
    source = (REAL / "templates" / f"{template}.jinja").read_text("utf-8")
    tok = load_tokenizer(str(REAL / "tokenizers" / tokenizer)) if tokenizer else None
    comparer = Comparer(fmt, ChatTemplate(source, special_tokens=tokens, now=DATE), tokenizer=tok, on_date=DATE)
    differing, matched_tokens, round_trips = set(), 0, 0
    for sc in SCENARIOS:
        res = comparer.compare(replace(sc, options={**sc.options, **options}))
        if res.bytes.status != "match":
            differing.add(sc.id)
            continue
        if tok is not None and res.native is not None:
            assert res.tokens.status == "match", (sc.id, res.tokens.detail)
            matched_tokens += 1
        assert res.round_trip.status != "differ", (sc.id, res.round_trip.detail)
        round_trips += res.round_trip.status == "match"
    assert differing == lossy
    assert round_trips >= 2 and (tok is None or matched_tokens >= 20)
