"""``parse --batch`` / ``render --batch`` never lose a file: a bad line is an error row naming the line and the
problem and the run goes on; a bad file is one error code of its own, and the output under its final name is
either complete or absent (a run writes ``OUT.partial-<pid>`` and renames it when the last row is in).

Each test checks the output file itself: every input line has its row, in order, or nothing is there."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolwire.batch import BatchFileError, BatchParser, BatchRenderer, run_file
from toolwire.workbench.cli import main

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CUT = CALL[:45]  # ends inside the call's arguments


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def parquet_rows(path: Path) -> list[dict]:
    pq = pytest.importorskip("pyarrow.parquet")
    return pq.read_table(path).to_pylist()


def rows_of(path: Path) -> list[dict]:
    return parquet_rows(path) if path.suffix == ".parquet" else lines(path)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".partial-" in p.name)


def run_cli(capsys, *argv) -> tuple[int, str]:
    code = main(list(map(str, argv)))
    return code, capsys.readouterr().err


# ---------------------------------------------------------------- line-level: the run goes on

BAD_LINES = [  # (raw line, error code, words of the message)
    (b"not json at all", "invalid_json", "line 2 is not JSON"),
    (b'{"model_output": "unterminated', "invalid_json", "line 2 is not JSON"),
    (b"[1, 2, 3]", "not_an_object", "line 2 is a JSON array, not a JSON object"),
    (b'"just a string"', "not_an_object", "line 2 is a JSON string"),
    (b"42", "not_an_object", "line 2 is a JSON number"),
    (b'{"model_output": "caf\xe9"}', "not_utf8", "line 2 is not UTF-8 text (byte 22 of the line)"),
    (b'{"id": 7, "text": "no field"}', "missing_field", "line 2 has no 'model_output' field (it has 'id', 'text')"),
]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.parametrize("raw, code, words", BAD_LINES, ids=[f"{c}-{i}" for i, (_, c, _) in enumerate(BAD_LINES)])
def test_a_bad_line_is_an_error_row_at_its_place(tmp_path, capsys, raw, code, words, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'{"id": 1, "model_output": "Hello."}\n' + raw + b'\n{"id": 3, "model_output": "' +
                    json.dumps(CALL)[1:-1].encode() + b'"}\n')
    out = tmp_path / f"out{suffix}"
    code_, err = run_cli(capsys, "parse", "--format", "qwen3", "--batch", src, "--out", out)
    assert code_ == 0, err
    rows = rows_of(out)
    assert [r["status"] for r in rows] == ["no_call", "error", "called"]   # complete, in order
    assert rows[1]["error"].startswith(f"{code}: {words}")
    assert rows[0]["content"] == "Hello." and rows[2]["tool_calls"][0]["name"] == "get_weather"
    assert "3 rows" in err and "1 error" in err and "1 errors" not in err
    assert leftovers(tmp_path) == []


def test_a_row_without_the_field_keeps_its_own_columns(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "a", "text": "hi"}) + "\n" + json.dumps({"id": "b", "model_output": None}) + "\n")
    run_file(BatchParser("qwen3"), str(src), str(tmp_path / "out.jsonl"), progress=False)
    rows = lines(tmp_path / "out.jsonl")
    assert [(r["id"], r.get("text")) for r in rows] == [("a", "hi"), ("b", None)]
    assert rows[0]["error"] == "missing_field: line 1 has no 'model_output' field (it has 'id', 'text')"
    assert rows[1]["error"] == "missing_field: the 'model_output' value is missing (null)"


def test_bad_lines_across_chunks_and_workers_keep_their_places(tmp_path):
    good = json.dumps({"model_output": CALL})
    raw = [good if i % 5 else "{broken" for i in range(40)]
    (tmp_path / "in.jsonl").write_text("\n".join(raw) + "\n")
    summary = run_file(BatchParser("qwen3", tools=TOOLS), str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"),
                       workers=2, chunk_rows=3, progress=False)
    rows = lines(tmp_path / "out.jsonl")
    assert len(rows) == 40 and summary.rows == 40 and summary.errors == 8
    for i, row in enumerate(rows):
        if i % 5:
            assert row["status"] == "called" and row["tool_calls"][0]["status"] == "validated"
        else:
            assert row["error"].startswith(f"invalid_json: line {i + 1} is not JSON")


def test_mixed_type_passthrough_goes_to_parquet_as_text_with_a_note(tmp_path, capsys):
    """The issue's file: 1,002 rows, int ids and then a string id; before, 768 rows and an internal error."""
    pytest.importorskip("pyarrow")
    ids = list(range(1001)) + ["id-1001"]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "meta": {"n": 1} if k % 2 else {"tag": "x"},
                                       "model_output": "ok"}) + "\n" for k, i in enumerate(ids)))
    code, err = run_cli(capsys, "parse", "--format", "qwen3", "--batch", src, "--out", tmp_path / "out.parquet")
    assert code == 0, err
    rows = parquet_rows(tmp_path / "out.parquet")
    assert [r["id"] for r in rows] == [str(i) for i in ids]                      # every row, every id, as text
    assert rows[1]["meta"] == {"n": 1, "tag": None} and rows[0]["meta"] == {"n": None, "tag": "x"}  # one struct
    assert "note: column 'id' holds int and str values" in err and "written as text" in err
    jsonl = tmp_path / "out.jsonl"
    run_file(BatchParser("qwen3"), str(src), str(jsonl), progress=False)
    assert [r["id"] for r in lines(jsonl)] == ids                               # JSON lines keep the types


def test_input_columns_named_like_result_columns_are_noted(tmp_path):
    (tmp_path / "in.jsonl").write_text(json.dumps({"model_output": "hi", "status": "mine"}) + "\n")
    summary = run_file(BatchParser("qwen3"), str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), progress=False)
    assert summary.notes == ["input column 'status' is replaced by the result column of that name"]
    assert lines(tmp_path / "out.jsonl")[0]["status"] == "no_call"


def test_a_truncated_row_is_truncated_with_and_without_tools(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"model_output": o}) + "\n" for o in (CALL, CUT, "text")))
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    statuses = []
    for extra in ([], ["--tools", tmp_path / "tools.json"]):
        out = tmp_path / f"out{len(extra)}.jsonl"
        code, err = run_cli(capsys, "parse", "--format", "qwen3", *extra, "--batch", src, "--out", out)
        assert code == 0 and "1 truncated" in err and "0 rejected" in err, err
        statuses.append([r["status"] for r in lines(out)])
    assert statuses[0] == statuses[1] == ["called", "truncated", "no_call"]
    with_tools = lines(tmp_path / "out2.jsonl")[1]["tool_calls"][0]
    assert with_tools["status"] == "rejected" and with_tools["error_codes"] == ["truncated"]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.parametrize("source", ["empty.jsonl", "blank.jsonl", "empty.parquet"])
def test_an_empty_input_gives_a_valid_empty_output(tmp_path, capsys, source, suffix):
    if suffix == ".parquet" or source.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    src = tmp_path / source
    if source.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"model_output": pa.array([], pa.string())}), src)
    else:
        src.write_text("" if source == "empty.jsonl" else "\n  \n")
    out = tmp_path / f"out{suffix}"
    code, err = run_cli(capsys, "parse", "--format", "qwen3", "--batch", src, "--out", out)
    assert code == 0 and "0 rows" in err, err
    if suffix == ".jsonl":
        assert out.read_bytes() == b""
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(out)
        assert table.num_rows == 0 and {"content", "status", "tool_calls", "error"} <= set(table.schema.names)


def test_render_batch_bad_lines_are_error_rows(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n{oops\n"
                   + json.dumps({"conversation": []}) + "\n")
    run_file(BatchRenderer("qwen3"), str(src), str(tmp_path / "out.jsonl"), progress=False)
    rows = lines(tmp_path / "out.jsonl")
    assert rows[0]["prompt"].startswith("<|im_start|>user\nhi") and rows[0]["error"] is None
    assert rows[1]["prompt"] is None and rows[1]["error"].startswith("invalid_json: line 2")
    assert rows[2]["error"].startswith("missing_field: line 3 has no 'messages' field")


# ---------------------------------------------------------------- file-level: one code each, nothing written

def _gzip(path: Path) -> None:
    path.write_bytes(gzip.compress(b'{"model_output": "hi"}\n'))


def _parquet_named_jsonl(path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"model_output": ["hi"]}), path)


def _corrupt_parquet(path: Path) -> None:
    path.write_bytes(b"PAR1" + b"\0garbage" * 10)


def _parquet_without_field(path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": ["hi"]}), path)


FILE_CASES = [  # (input name, how to make it, --out name, code, words)
    ("missing.jsonl", None, "out.jsonl", "file_not_found", "no such file"),
    ("folder.jsonl", lambda p: p.mkdir(), "out.jsonl", "not_a_file", "is a directory"),
    ("in.jsonl", lambda p: p.write_bytes(b'{"model_output": "a"}\n\x00\x01\x02binary\n'), "out.jsonl",
     "binary_input", "NUL byte at offset 22"),
    ("in.jsonl", _gzip, "out.jsonl", "binary_input", "gzip-compressed"),
    ("in.jsonl", _parquet_named_jsonl, "out.jsonl", "binary_input", "a Parquet file: name it .parquet"),
    ("in.jsonl", lambda p: p.write_text('[\n  {"model_output": "a"}\n]\n'), "out.jsonl", "not_json_lines",
     "one object per line"),
    ("in.csv", lambda p: p.write_text("model_output\nhi\n"), "out.jsonl", "unsupported_input", "not .csv"),
    ("in.parquet", _corrupt_parquet, "out.parquet", "invalid_parquet", "cannot be read as Parquet"),
    ("in.parquet", _parquet_without_field, "out.jsonl", "missing_field",
     "has no column 'model_output' (columns: text)"),
    ("in.jsonl", lambda p: p.write_text('{"model_output": "a"}\n'), "out.csv", "unsupported_output", "not .csv"),
    ("in.jsonl", lambda p: p.write_text('{"model_output": "a"}\n'), "out", "unsupported_output",
     "not a file without a suffix"),
    ("in.jsonl", lambda p: p.write_text('{"model_output": "a"}\n'), "in.jsonl", "out_is_input", "is the input file"),
    ("in.jsonl", lambda p: p.write_text('{"model_output": "a"}\n'), "no/such/folder/out.jsonl", "unwritable",
     "cannot write"),
]


@pytest.mark.parametrize("name, make, out_name, code, words", FILE_CASES, ids=[c[3] + "-" + c[0] + "-" + c[2]
                                                                                for c in FILE_CASES])
def test_a_bad_file_is_its_own_error_code_and_writes_nothing(tmp_path, capsys, name, make, out_name, code, words):
    src = tmp_path / name
    if make is not None:
        make(src)
    out = tmp_path / out_name
    before = out.read_bytes() if out.is_file() else None
    exit_code, err = run_cli(capsys, "parse", "--format", "qwen3", "--batch", src, "--out", out)
    assert exit_code == 2 and err.startswith(f"toolwire: error [{code}]: ") and words in err, err
    assert "Traceback" not in err and "internal" not in err
    assert (out.read_bytes() if out.is_file() else None) == before      # absent, or the input left as it was
    assert leftovers(tmp_path) == []
    with pytest.raises(BatchFileError) as raised:                       # the library raises the same code
        run_file(BatchParser("qwen3"), str(src), str(out), progress=False)
    assert raised.value.code == code


# ---------------------------------------------------------------- interrupted runs

SCRIPT = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal, also when the test runner's parent
from toolwire.workbench.cli import main                   # ignores SIGINT (a background job inherits SIG_IGN)
sys.exit(main(["parse", "--format", "qwen3", "--batch", "-", "--out", sys.argv[1]]))
"""


def _interrupted(tmp_path: Path, sig: int) -> tuple[int, Path]:
    """A CLI run reading stdin, stopped by ``sig`` once its first chunk reached the temporary file."""
    out = tmp_path / "out.jsonl"
    out.write_text("the previous complete output\n")
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(out)], stdin=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path)
    line = (json.dumps({"model_output": CALL + " " + "x" * 200}) + "\n").encode()
    proc.stdin.write(line * 600)  # two chunks of 256 and a part: the third never completes
    proc.stdin.flush()
    deadline = time.monotonic() + 300  # a guard against a hang only: the verdict is the state on disk
    while not any(p.stat().st_size for p in tmp_path.glob("out.jsonl.partial-*")):
        assert proc.poll() is None and time.monotonic() < deadline, "the run never wrote its first chunk"
        time.sleep(0.05)
    proc.send_signal(sig)
    code = proc.wait(timeout=300)
    proc.stdin.close()
    proc.stderr.close()
    return code, out


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_an_interrupted_run_removes_its_partial_file_and_keeps_the_old_output(tmp_path):
    code, out = _interrupted(tmp_path, signal.SIGINT)
    assert code == 130
    assert out.read_text() == "the previous complete output\n"
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_a_killed_run_leaves_only_its_partial_file(tmp_path):
    code, out = _interrupted(tmp_path, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert out.read_text() == "the previous complete output\n"
    (partial,) = leftovers(tmp_path)
    assert partial.startswith("out.jsonl.partial-")
    assert all(json.loads(line)["status"] == "called" for line in (tmp_path / partial).read_text().splitlines()[:-1])


@pytest.mark.parametrize("out_name", ["out.jsonl", "out.parquet"])
def test_binary_stdin_is_refused_before_any_row(tmp_path, out_name):
    if out_name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    proc = subprocess.run([sys.executable, "-m", "toolwire.workbench.cli", "parse", "--format", "qwen3", "--batch",
                           "-", "--out", str(tmp_path / out_name)], input=gzip.compress(b'{"model_output": "a"}\n'),
                          capture_output=True, timeout=900)
    assert proc.returncode == 2 and proc.stderr.startswith(b"toolwire: error [binary_input]: stdin is not JSON lines")
    assert not (tmp_path / out_name).exists() and leftovers(tmp_path) == []
