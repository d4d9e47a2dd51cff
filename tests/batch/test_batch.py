"""toolwire.batch: mappers built from configuration, Arrow-friendly columns, files in and out on N workers.

The reference for every parsed row is the format's own ``parse`` (and ``validate``) of that row; for every
rendered row, the golden render vector."""

from __future__ import annotations

import json
import pickle

import pytest

import toolwire
from toolwire.batch import BatchParser, BatchRenderer, row_status, run_file
from toolwire.batch import mappers
from toolwire.tokenize import load_tokenizer

from support import REAL, golden, require_shared

FORMATS = ["qwen3", "deepseek_v4", "glm47", "gpt_oss", "kimi_k2", "mistral_small32"]


def parse_rows(family):
    require_shared()
    return golden("parse", family)


def expected_columns(row, family, validate=True):
    """What one row must give, from the format's own parse/validate (the batch layer is what is tested)."""
    fmt = toolwire.get_format(family)
    thinking = bool(row.get("prompt_opens_reasoning", row["options"].get("thinking", False)))
    out = fmt.parse(row["model_output"], row["tools"], thinking=thinking)
    if validate:
        out = out.validate(row["tools"])
    return {"content": out.content, "reasoning": out.reasoning,
            "calls": [(c.name, c.arguments, c.status) for c in out.tool_calls], "status": row_status(out),
            "finish_reason": out.finish_reason()}


def got_columns(columns, i):
    return {"content": columns["content"][i], "reasoning": columns["reasoning"][i],
            "calls": [(c["name"], json.loads(c["arguments"]), c["status"]) for c in columns["tool_calls"][i]],
            "status": columns["status"][i], "finish_reason": columns["finish_reason"][i]}


def batch_of(rows):
    return {"id": [r["id"] for r in rows], "model_output": [r["model_output"] for r in rows],
            "thinking": [bool(r.get("prompt_opens_reasoning", r["options"].get("thinking", False))) for r in rows]}


@pytest.mark.parametrize("family", FORMATS)
def test_every_golden_row_gives_the_formats_own_result(family):
    rows = parse_rows(family)
    tools = rows[0]["tools"]
    same_tools = [r for r in rows if r["tools"] == tools]
    columns = BatchParser(family, tools=tools)(batch_of(same_tools))
    assert columns["id"] == [r["id"] for r in same_tools]          # input columns are kept
    for i, row in enumerate(same_tools):
        assert got_columns(columns, i) == expected_columns(row, family)
        assert columns["error"][i] is None


def test_bad_rows_get_an_error_column_and_never_stop_the_batch():
    good = parse_rows("qwen3")[0]
    batch = {"model_output": [good["model_output"], None, 42, ["not", "text"], good["model_output"]]}
    columns = BatchParser("qwen3", tools=good["tools"])(batch)
    assert columns["status"] == ["called", "error", "error", "error", "called"]
    assert columns["error"][1] == "missing_field: the 'model_output' value is missing (null)"
    assert columns["error"][2] == "not_text: the 'model_output' value is int, not text"
    assert columns["content"][1] is None and columns["tool_calls"][1] == []
    assert got_columns(columns, 4) == expected_columns(good, "qwen3")


def test_a_missing_column_is_named():
    with pytest.raises(toolwire.errors.InvalidOption) as err:
        BatchParser("qwen3")({"text": ["hi"]})
    assert "model_output" in str(err.value)


def test_configuration_errors_are_raised_before_shipping():
    with pytest.raises(toolwire.UnknownFormat):
        BatchParser("qwen9")
    with pytest.raises(toolwire.errors.InvalidOption):
        BatchParser("qwen3", tokenizer=object())
    with pytest.raises(toolwire.errors.InvalidOption):
        BatchParser("qwen3", ids_field="ids")


def test_a_mapper_pickles_as_its_configuration():
    rows = parse_rows("qwen3")[:6]
    parser = BatchParser("qwen3", tools=rows[0]["tools"], limits=toolwire.Limits(max_calls=3),
                         tokenizer=str(REAL / "tokenizers" / "Qwen3"), options={"promote_reasoning_calls": True})
    data = pickle.dumps(parser)
    assert len(data) < 4000 and b"tokenizer.json" not in data     # a path, never a loaded tokenizer
    clone = pickle.loads(data)
    assert vars(clone) == vars(parser)
    assert clone(batch_of(rows)) == parser(batch_of(rows))


def test_heavy_things_load_once_per_process():
    require_shared()
    mappers._tokenizer.cache_clear()
    path = str(REAL / "tokenizers" / "Qwen3")
    tok = load_tokenizer(path)
    rows = [r for r in parse_rows("qwen3") if r["tools"] == parse_rows("qwen3")[0]["tools"]][:8]
    ids = [tok(r["model_output"], add_special_tokens=False)["input_ids"] for r in rows]
    parser = BatchParser("qwen3", tools=rows[0]["tools"], ids_field="ids", tokenizer=path)
    for _ in range(3):
        columns = pickle.loads(pickle.dumps(parser))({"ids": ids, "thinking": batch_of(rows)["thinking"]})
    info = mappers._tokenizer.cache_info()
    # loaded once, when the parser is built (a missing extra or folder fails there); each rebuild from a pickle
    # and each row finds it loaded
    assert (info.misses, info.hits) == (1, 3 + 3 * len(rows))
    for i, row in enumerate(rows):  # token ids give what the text gives
        assert got_columns(columns, i) == expected_columns(row, "qwen3")


def test_arrow_tables_keep_one_schema_with_and_without_calls():
    pa = pytest.importorskip("pyarrow")
    rows = parse_rows("qwen3")
    tools = rows[0]["tools"]
    no_calls = [r for r in rows if not r["expected"]["tool_calls"] and r["tools"] == tools][:3]
    calls = [r for r in rows if r["expected"]["tool_calls"] and r["tools"] == tools][:3]
    parser = BatchParser("qwen3", tools=tools)
    tables = [parser(pa.table({"model_output": [r["model_output"] for r in part]})) for part in (no_calls, calls)]
    assert tables[0].schema == tables[1].schema
    merged = pa.concat_tables(tables)
    assert merged.column("num_tool_calls").to_pylist() == [0] * len(no_calls) + [len(r["expected"]["tool_calls"]) for r in calls]


def test_pandas_frames_in_and_out():
    pd = pytest.importorskip("pandas")
    rows = parse_rows("glm47")[:4]
    frame = pd.DataFrame({"model_output": [r["model_output"] for r in rows], "thinking": batch_of(rows)["thinking"]})
    out = BatchParser("glm47", tools=rows[0]["tools"])(frame)
    assert isinstance(out, pd.DataFrame) and list(out["model_output"]) == list(frame["model_output"])
    assert list(out["content"]) == [expected_columns(r, "glm47")["content"] for r in rows]


def test_hf_datasets_map_batched():
    datasets = pytest.importorskip("datasets")
    rows = [r for r in parse_rows("deepseek_v4") if r["tools"] == parse_rows("deepseek_v4")[0]["tools"]]
    ds = datasets.Dataset.from_dict(batch_of(rows))
    mapped = ds.map(BatchParser("deepseek_v4", tools=rows[0]["tools"]), batched=True, batch_size=5)
    for i, row in enumerate(rows):
        got = mapped[i]
        assert (got["content"], got["reasoning"], got["status"]) == \
               tuple(expected_columns(row, "deepseek_v4")[k] for k in ("content", "reasoning", "status"))


@pytest.mark.parametrize("family", ["qwen3", "deepseek_v4", "gpt_oss"])
def test_renderer_gives_the_golden_prompts_and_refusals(family):
    require_shared()
    for row in golden("render", family):
        renderer = BatchRenderer(family, tools=row["request"].get("tools"), options=dict(row["options"]))
        got = renderer({"messages": [json.dumps(row["request"]["messages"])]})   # JSON text, as in a file
        if "expected_error" in row:
            assert got["prompt"] == [None] and got["error"][0]
        else:
            assert got["prompt"] == [row["expected"]] and got["error"] == [None]


def test_renderer_per_row_tools_and_token_ids():
    require_shared()
    rows = [r for r in golden("render", "qwen3") if "expected_error" not in r and not r["options"]][:6]
    path = str(REAL / "tokenizers" / "Qwen3")
    renderer = BatchRenderer("qwen3", tools_field="tools", tokenizer=path)
    got = renderer({"messages": [r["request"]["messages"] for r in rows],
                    "tools": [json.dumps(r["request"].get("tools")) for r in rows]})
    tok = load_tokenizer(path)
    for i, row in enumerate(rows):
        assert got["prompt"][i] == row["expected"]
        assert got["token_ids"][i] == tok(row["expected"], add_special_tokens=False)["input_ids"]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_files_in_and_out_on_two_workers(tmp_path):
    rows = [r for r in parse_rows("qwen3") if r["tools"] == parse_rows("qwen3")[0]["tools"]]
    records = [{"id": r["id"], "model_output": r["model_output"],
                "thinking": bool(r.get("prompt_opens_reasoning", r["options"]["thinking"]))} for r in rows]
    records.append({"id": "bad", "model_output": None})
    write_jsonl(tmp_path / "in.jsonl", records)
    parser = BatchParser("qwen3", tools=rows[0]["tools"])
    one = run_file(parser, str(tmp_path / "in.jsonl"), str(tmp_path / "one.jsonl"), workers=1, chunk_rows=7,
                   progress=False)
    two = run_file(parser, str(tmp_path / "in.jsonl"), str(tmp_path / "two.jsonl"), workers=2, chunk_rows=7,
                   progress=False)
    assert (tmp_path / "one.jsonl").read_text() == (tmp_path / "two.jsonl").read_text()
    out = [json.loads(line) for line in (tmp_path / "two.jsonl").read_text().splitlines()]
    assert [o["id"] for o in out] == [r["id"] for r in records]      # order kept
    expected = [expected_columns(r, "qwen3") for r in rows]
    assert [o["status"] for o in out[:-1]] == [e["status"] for e in expected] and out[-1]["status"] == "error"
    for summary in (one, two):
        assert summary.rows == len(records) and summary.errors == 1
        assert summary.with_calls == sum(1 for e in expected if e["calls"])
        assert summary.statuses.get("rejected", 0) == sum(1 for e in expected if e["status"] == "rejected")
        assert "rows/s" in summary.text()


def test_parquet_in_and_out(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    rows = parse_rows("gpt_oss")
    pq.write_table(pa.table({"model_output": [r["model_output"] for r in rows]}), tmp_path / "in.parquet")
    run_file(BatchParser("gpt_oss", thinking=False), str(tmp_path / "in.parquet"), str(tmp_path / "out.parquet"),
             chunk_rows=10, progress=False)
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.num_rows == len(rows)
    fmt = toolwire.get_format("gpt_oss")
    assert table.column("content").to_pylist() == [fmt.parse(r["model_output"]).content for r in rows]


def test_the_progress_bar_counts_rows_only_when_drawn(tmp_path, capsys):
    """``run_file``'s bar (toolwire.progress, shared with ``eval.score``): off, the input is never counted;
    on, its total is the number of non-blank lines and it ends at that count."""
    pytest.importorskip("tqdm")
    from toolwire.progress import progress_bar

    asked = []
    assert progress_bar(False, "rows", lambda: asked.append(1)) is None and asked == []
    bar = progress_bar(True, "rows", lambda: 7)
    assert (bar.total, bar.unit) == (7, "rows")
    bar.close()
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps({"model_output": "hi"}) for _ in range(3)) + "\n\n", encoding="utf-8")
    run_file(BatchParser("qwen3"), str(src), str(tmp_path / "out.jsonl"), progress=True)
    assert "3/3" in capsys.readouterr().err
