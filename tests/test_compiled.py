"""The compiled hot paths (toolwire/_compiled.py, setup.py): built here, used, and identical to the pure-Python source.

``make test`` installs with Cython, so every module of ``COMPILED`` must run compiled in this environment (unless
``TOOLWIRE_PURE_PYTHON`` is set); a subprocess with ``TOOLWIRE_PURE_PYTHON=1`` runs the same requests through the
source and must give the same prompts, pieces and refusals; and a build of another source is passed over.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import toolwire
from support import golden, require_shared
from toolwire import _compiled

HERE = Path(__file__).resolve().parent
DSML = ("deepseek_v32", "deepseek_v4", "deepseek_v41")


def _refusal(exc: Exception) -> list:
    return [type(exc).__name__, getattr(exc, "message_index", None), getattr(exc, "field", None), str(exc)]


def _render_digest() -> dict[str, str]:
    """Per format, a digest of its renders (text, pieces, opens_reasoning) or refusals: the DSML formats (compiled
    renderers) on every golden request of every family, the other formats on their own family's requests; and the
    request-value checks (compiled) on values they refuse."""
    from toolwire.request_values import call_arguments, check_json_value, check_text, lone_surrogate
    from toolwire.models import normalize_messages

    every = [row for name in toolwire.formats() for row in golden("render", name)]
    out: dict[str, str] = {}
    for name in toolwire.formats():
        fmt = toolwire.get_format(name)
        items = []
        for row in every if name in DSML else golden("render", name):
            for thinking in (False, True):
                try:
                    prompt = fmt.render(row["request"]["messages"], row["request"].get("tools"),
                                        **{**row.get("options", {}), "thinking": thinking})
                    items.append([prompt.text, [list(p) for p in prompt.pieces], prompt.opens_reasoning])
                except Exception as exc:  # noqa: BLE001 - a refusal is part of the output compared
                    items.append(_refusal(exc))
        out[name] = hashlib.sha256(json.dumps(items, ensure_ascii=True).encode()).hexdigest()
    checks = []
    for value in ("ok", "caf\u00e9", "a\ud800b", "\udfff", {"k": ["x", "\ud83d"]}, {1: "a"}, [[[]]], 10 ** 5000, {"s"}):
        for check in (lambda v: check_text(v, message_index=3, field="content"), lone_surrogate,
                      lambda v: check_json_value(v, message_index=1, field="arguments")):
            try:
                checks.append(["ok", check(value)])
            except Exception as exc:  # noqa: BLE001 - as above
                checks.append(_refusal(exc))
    for arguments in ('{"a": 1}', '{"a": "\\ud800"}', "[1]", "{bad", {"b": [1, {"c": None}]}):
        call = normalize_messages([{"role": "assistant", "tool_calls": [
            {"function": {"name": "f", "arguments": arguments}}]}])[0].tool_calls[0]
        try:
            checks.append(["ok", call_arguments(call, 2, 0)])
        except Exception as exc:  # noqa: BLE001 - as above
            checks.append(_refusal(exc))
    out["request_values"] = hashlib.sha256(json.dumps(checks, ensure_ascii=True).encode()).hexdigest()
    return out


def _loaded_modules() -> dict[str, str]:
    for name in _compiled.COMPILED:
        importlib.import_module(name)
    return _compiled.status()


def test_every_hot_path_runs_compiled_in_the_test_environment():
    """The install ``make test`` made compiled every module (a silent fallback would measure pure Python)."""
    expected = "source" if os.environ.get(_compiled.PURE_PYTHON, "") not in ("", "0") else "compiled"
    assert _loaded_modules() == dict.fromkeys(_compiled.COMPILED, expected), (
        "a compiled module is missing or was built from another source: reinstall (make test does)")


def test_pure_python_source_gives_the_same_prompts_and_refusals():
    require_shared()
    script = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import json, test_compiled; "
              "print(json.dumps({'status': test_compiled._loaded_modules(), "
              "'digest': test_compiled._render_digest()}))")
    env = {**os.environ, _compiled.PURE_PYTHON: "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    pure = json.loads(done.stdout.strip().splitlines()[-1])
    assert pure["status"] == dict.fromkeys(_compiled.COMPILED, "source")
    assert pure["digest"] == _render_digest()


def test_a_build_of_another_source_is_passed_over(tmp_path, monkeypatch):
    """A compiled module whose source was edited since the build (its digest no longer matches) is not used, nor is
    one without a digest: the edit takes effect. With the matching digest the build is used."""
    built = importlib.import_module("toolwire.request_values").__spec__.origin
    if not built.endswith(".so"):
        pytest.skip("toolwire.request_values is not compiled in this environment")
    package = tmp_path / "twpkg"
    package.mkdir()
    shutil.copy(built, package / Path(built).name)
    source = package / "request_values.py"
    source.write_text("VALUE = 1\n")
    digest = package / "request_values.sha256"
    monkeypatch.setitem(_compiled.COMPILED, "twpkg.request_values", "twpkg/request_values.py")
    finder = _compiled._SourceFirst(pure=False)
    for written in (None, hashlib.sha256(b"VALUE = 0\n").hexdigest()):  # no digest; another source's
        if written:
            digest.write_text(written)
        spec = finder.find_spec("twpkg.request_values", [str(package)])
        assert spec.origin == str(source) and finder.chosen["twpkg.request_values"] == "source (stale build)"
    digest.write_text(hashlib.sha256(source.read_bytes()).hexdigest())
    spec = finder.find_spec("twpkg.request_values", [str(package)])
    assert spec.origin.endswith(".so") and finder.chosen["twpkg.request_values"] == "compiled"
    assert _compiled._SourceFirst(pure=True).find_spec("twpkg.request_values", [str(package)]).origin == str(source)
