"""Reading the command line's files, and the one error every bad input becomes.

Every helper here raises :class:`BadInput` (a :class:`~toolwire.errors.ToolwireError` with the code given)
naming the file or field, so ``toolwire`` can print ``toolwire: error [code]: ...`` and exit 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from toolwire.errors import ToolwireError

EXTRAS = {"transformers": "hf", "tokenizers": "hf", "jsonschema": "schema", "tiktoken": "harmony",
          "openai_harmony": "harmony", "lxml": "report", "mistral_common": "mistral", "sentencepiece": "mistral",
          "matplotlib": "eval", "pyarrow": "batch", "ray": "ray"}
"""Top-level module -> the toolwire extra that installs it (``pip install toolwire[EXTRA]``)."""


class BadInput(ToolwireError):
    """A file, argument or field the command cannot use. ``code`` names the kind of problem."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def missing_extra(exc: ImportError, feature: str) -> BadInput:
    """The error for a feature whose optional dependency is not installed, naming the extra to install."""
    module = (getattr(exc, "name", None) or str(exc).split("'")[1 if "'" in str(exc) else 0]).split(".")[0]
    extra = EXTRAS.get(module)
    hint = f"pip install 'toolwire[{extra}]'" if extra else f"pip install {module}"
    return BadInput("missing_extra", f"{feature} needs the {module} package: {hint}")


def limits_value(args: Any) -> Any:
    """``toolwire.Limits`` from ``--max-calls`` / ``--max-argument-bytes`` / ``--max-depth`` (None: the defaults)."""
    from toolwire.limits import Limits

    given = {name: getattr(args, name) for name in ("max_calls", "max_argument_bytes", "max_depth")
             if getattr(args, name, None) is not None}
    return Limits(**given) if given else None


def require(module: str, feature: str) -> None:
    """Refuse ``feature`` before any work when ``module`` (an optional dependency) is not installed."""
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise missing_extra(ModuleNotFoundError(f"No module named {module!r}", name=module), feature)


def read_text(path: str, what: str = "file") -> str:
    """The text of ``path`` (``-`` reads stdin); bytes that are not UTF-8 are refused the same way from both."""
    if path == "-":
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        if isinstance(data, str):
            return data
        try:
            return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as a file reads
        except UnicodeDecodeError as exc:
            raise BadInput("not_utf8", f"{what} on stdin: not UTF-8 text (byte {exc.start})") from None
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput("file_not_found", f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise BadInput("not_a_file", f"{what} {path}: is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise BadInput("not_utf8", f"{what} {path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise BadInput("unreadable", f"{what} {path}: {exc.strerror or exc}") from None


def read_json(path: str, what: str = "file") -> Any:
    """The JSON value in ``path`` (``-`` reads stdin)."""
    text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput("invalid_json", f"{what} {path}: not valid JSON ({exc.msg}, line {exc.lineno} "
                                       f"column {exc.colno})") from None


def request_parts(data: Any, path: str) -> tuple[list, Any, dict]:
    """``(messages, tools, options)`` of a request file: ``{"messages", "tools"?, "options"?}`` or a message list."""
    if isinstance(data, list):
        return data, None, {}
    if not isinstance(data, dict) or "messages" not in data:
        raise BadInput("invalid_request", f"request {path}: expected {{\"messages\": [...], \"tools\": [...]}} "
                                          f"or a list of messages, got {_kind(data)}")
    if not isinstance(data["messages"], list):
        raise BadInput("invalid_request", f"request {path}: messages must be a list, got {_kind(data['messages'])}")
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise BadInput("invalid_request", f"request {path}: options must be an object, got {_kind(options)}")
    return data["messages"], tools_value(data.get("tools"), path), dict(options)


def tools_value(value: Any, path: str) -> list | None:
    """A tools file's list: a bare list or ``{"tools": [...]}``; anything else names the file."""
    if isinstance(value, dict) and "tools" in value:
        value = value["tools"]
    if value is None or isinstance(value, list):
        return value
    raise BadInput("invalid_tools", f"tools in {path}: expected a list of tool definitions "
                                    f"(or {{\"tools\": [...]}}), got {_kind(value)}")


def write_output(path: str, data: str | bytes) -> None:
    """Write ``data`` to ``path``; ``-`` writes it to stdout."""
    if path == "-":
        if isinstance(data, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(data)
        return
    try:
        if isinstance(data, bytes):
            Path(path).write_bytes(data)
        else:
            Path(path).write_text(data, encoding="utf-8")
    except OSError as exc:
        raise BadInput("unwritable", f"cannot write {path}: {exc.strerror or exc}") from None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


__all__ = ["BadInput", "limits_value", "missing_extra", "require", "read_text", "read_json", "request_parts",
           "tools_value", "write_output", "EXTRAS"]
