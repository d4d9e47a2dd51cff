"""Format registry: names to family modules, imported lazily so ``import toolwire`` stays light.

Each family module in ``toolwire.templates`` exposes ``FORMATS: dict[str, Format]``.
"""

from __future__ import annotations

import importlib
import importlib.util

from .errors import UnknownFormat
from .format import Format

# name -> module holding it (modules not yet present in this build are simply not listed)
_MODULES: dict[str, str] = {
    "deepseek_v32": "toolwire.templates.dsml",
    "deepseek_v4": "toolwire.templates.dsml",
    "deepseek_v41": "toolwire.templates.dsml",
    "deepseek_v31": "toolwire.templates.deepseek_legacy",
    "deepseek_r1": "toolwire.templates.deepseek_legacy",
    "qwen25": "toolwire.templates.hermes_json",
    "qwen3": "toolwire.templates.hermes_json",
    "qwen3_instruct_2507": "toolwire.templates.hermes_json",
    "qwen3_thinking_2507": "toolwire.templates.hermes_json",
    "kimi_k2": "toolwire.templates.kimi",
    "kimi_k2_thinking": "toolwire.templates.kimi",
    "llama31": "toolwire.templates.llama",
    "mistral_small32": "toolwire.templates.mistral",
    "qwen3_coder": "toolwire.templates.qwen_xml",
    "qwen35": "toolwire.templates.qwen_xml",
    "qwen36": "toolwire.templates.qwen_xml",
    "glm45": "toolwire.templates.glm",
    "glm46": "toolwire.templates.glm",
    "glm47": "toolwire.templates.glm",
    "minimax_m2": "toolwire.templates.minimax",
    "seed_oss": "toolwire.templates.seed_oss",
    "gpt_oss": "toolwire.templates.harmony",
    "hermes3": "toolwire.templates.hermes3",
    "granite4": "toolwire.templates.granite",
    "llama32": "toolwire.templates.llama",
    "llama4": "toolwire.templates.llama4",
    "ministral3": "toolwire.templates.ministral",
    "qwen38": "toolwire.templates.qwen38",
    "nemotron3": "toolwire.templates.nemotron",
    "step35": "toolwire.templates.step35",
    "laguna": "toolwire.templates.laguna",
    "hy3": "toolwire.templates.hy3",
    "gemma4": "toolwire.templates.gemma",
    "minimax_m3": "toolwire.templates.minimax_m3",
    "kimi_k3": "toolwire.templates.kimi_k3",
    "lfm25": "toolwire.templates.lfm25",
    "llama4_pythonic": "toolwire.templates.llama4_pythonic",
}


IMPORT_ERRORS: dict[str, str] = {}
"""Family modules that exist but failed to import, with the error (a test asserts this stays empty)."""


def _module_formats(module: str) -> dict[str, Format]:
    """The ``FORMATS`` of a family module, or {} when the module is not part of this build."""
    try:
        if importlib.util.find_spec(module) is None:
            return {}
        return getattr(importlib.import_module(module), "FORMATS", {})
    except ImportError as exc:
        IMPORT_ERRORS[module] = f"{type(exc).__name__}: {exc}"
        return {}


def formats() -> list[str]:
    """The names of every available format, sorted."""
    return sorted(n for n, m in _MODULES.items() if n in _module_formats(m))


def get_format(name: str) -> Format:
    """The :class:`Format` registered under ``name``; raises :class:`UnknownFormat` naming close matches."""
    module = _MODULES.get(name)
    found = _module_formats(module).get(name) if module else None
    if found is None:
        raise UnknownFormat(name, formats())
    return found
