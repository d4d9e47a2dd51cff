"""Importing an engine adapter without the engine names what to install (this venv has neither vLLM nor SGLang,
nor torch): an ImportError that names the missing module and the pip command, not a bare ModuleNotFoundError
from deep inside the engine. (The engine venv tests the other case, vLLM installed but torch missing:
tests_engines/test_vllm_versions.py.)"""

from __future__ import annotations

import importlib
import importlib.util

import pytest

ADAPTERS = [("toolwire.integrations.vllm", "vllm", "vLLM"), ("toolwire.integrations.vllm_render", "vllm", "vLLM"),
            ("toolwire.integrations.sglang", "sglang", "SGLang")]


@pytest.mark.parametrize("module, extra, engine", ADAPTERS, ids=[a[0] for a in ADAPTERS])
def test_missing_engine_names_what_to_install(module, extra, engine):
    if importlib.util.find_spec(extra) is not None:
        pytest.fail(f"{extra} is installed in this venv; this test needs a venv without it")
    with pytest.raises(ImportError) as caught:
        importlib.import_module(module)
    error = caught.value
    assert type(error) is ImportError  # not the engine's own ModuleNotFoundError
    assert error.name == extra
    message = str(error)
    assert message.startswith(f"{module} needs {engine} installed with its own dependencies")
    assert f"no module named '{extra}'" in message
    assert f"pip install 'toolwire[{extra}]'" in message
    assert isinstance(error.__cause__, ModuleNotFoundError) and error.__cause__.name == extra


def test_the_engine_neutral_parts_import_without_an_engine():
    from toolwire.integrations import engine_prompts, engine_stream, wire_policy

    assert engine_stream.EngineStream and wire_policy.FailClosedStream and engine_prompts.recall([1]) is None
