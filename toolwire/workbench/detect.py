"""``toolwire detect``: which toolwire format a chat template belongs to.

Two kinds of evidence, both data:

* :data:`FINGERPRINTS`: the SHA-256 of each known revision of an official template (line endings unified,
  outer whitespace stripped). A hit names the format and the revision: the template is one toolwire's
  renderer is checked against.
* probing: each registered format's marker table (``Format.markers``) looked up in the template source.
  Only a format whose tool-call and turn markup all appear (:data:`PROBE_MIN`) fits; formats sharing the same
  markup are named together, and ``toolwire fidelity`` tells them apart.

Adding a family is adding its rows to :data:`FINGERPRINTS` (its markers are found from its ``Format``).
When nothing fits, the verdict says so and names the closest formats and what they miss.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolwire.registry import formats, get_format

from .inputs import BadInput, read_text

FINGERPRINTS: tuple[tuple[str, str, str], ...] = (
    # (format, template revision, sha256 of the normalized source)
    ("qwen25", "Qwen2.5-7B-Instruct", "55b2f4a26ac9ee719330a61a0c39d9e538b0e9322212f048326318cff4f8674a"),
    ("qwen3", "Qwen3-8B", "a55ee1b1660128b7098723e0abcd92caa0788061051c62d51cbe87d9cf1974d8"),
    ("qwen3_instruct_2507", "Qwen3-4B-Instruct-2507", "64f85b198065d0fba2a81f37e10ed68161ce2c19a754c7100e67e0ca2ee9c326"),
    ("qwen3_thinking_2507", "Qwen3-4B-Thinking-2507", "3802169b2a02b81e6adb7ab4f64f91ff02db753c8c3a64a01c35192d3a61d8d7"),
    ("qwen3_coder", "Qwen3-Coder", "eae48a3307931acb10a6fce475a36b711709672ea79ee1a9bc52f083d8b0a2af"),
    ("qwen35", "Qwen3.5-4B", "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715"),
    ("qwen36", "Qwen3.6-35B-A3B", "e84f32a23fdda27689f868aa4a1a5621f41133e51a48d7f3efcbea2839574259"),
    ("glm45", "GLM-4.5", "44f815868bf02fa458dd2f741a338046f4bf45f398eb6d067766726b9d96cce3"),
    ("glm46", "GLM-4.6", "e6e2ddfb13f8aef529a869e362f74743725c0919b8675139b93c0cb1623796c8"),
    ("glm47", "GLM-4.7-Flash", "d63ad536c3c81880043e22ec7fd08db42b4d8fb7c89c7138bc562bfa25281375"),
    ("kimi_k2", "Kimi-K2-Instruct", "aab20feb9bc6881f941ea649356130ffbc4943b3c2577c0991e1fba90de5a0fc"),
    ("kimi_k2_thinking", "Kimi-K2-Thinking", "f1838522f489f10c9196540a7e995578511168f9d6d7ce8a373909446c35d643"),
    ("minimax_m2", "MiniMax-M2", "a3e05b110e2d1ccf5373f2d2a09f8e2e6c7fc48247c8cb6cab5160a462dc2209"),
    ("deepseek_v31", "DeepSeek-V3.1", "d9f5f351b276cf9e81d009db08830db7d38e94927aecd09a7beb43e2aafee94e"),
    ("deepseek_r1", "DeepSeek-R1", "563b1ce7d61d50a9b4c7439a912a1116f095b712df5b5e4d3e1116049874eb64"),
    ("llama31", "Llama-3.1-8B-Instruct / Llama-3.3-70B-Instruct",
     "93c0e9aa3629bbd77e68dbc0f5621f6e6b23aa8d74b932595cdb8d64684526d7"),
    ("mistral_small32", "Mistral-Small-3.2-24B-Instruct-2506",
     "d990bccdaaa20611e261434bf60bce767b03d8ee1f1d9b5cd0742b1cc96066b9"),
    ("gpt_oss", "gpt-oss-20b / gpt-oss-120b", "a4c9919cbbd4acdd51ccffe22da049264b1b73e59055fa58811a99efbd7c8146"),
    ("seed_oss", "Seed-OSS-36B-Instruct", "3f9e0dc4adeb8032287d0129dc75b6298fee8698a52ab41e863dbc89929330d3"),
    ("deepseek_v4", "DeepSeek-V4 (llama.cpp port)", "f8b442fab67e75b3aa468334b5cdda671003b852ffd71f23cb23377d31d9c7be"),
    # templates of families being added (named "not in this build" until their format is registered)
    ("gemma4", "Gemma-4-E2B-it", "603a42db292c25278e9b23d94c7abbe77453f13e26a053c43c5c2f900b4136f7"),
    ("qwen38", "Qwen3.8-27B", "c3cf9e34abf4f9e36c2d72165aa9c132d3e2a725b6c2586aaa3a8af9d7a81041"),
    ("nemotron3", "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
     "43a92aacc2e169bb37055e4d8b0df31edfdc8657d8c387fcf98254cb246e626a"),
    ("minimax_m3", "MiniMax-M3", "c56d1f3ab70881b0e2ed8f51fa6de435d37b84d6c804ebb19a0ec4986fa5ffa9"),
    ("llama32", "Llama-3.2-3B-Instruct", "d82792f95932f1c9cef5c4bd992f171225e3bf8c7b609b4557c9e1ec96be819f"),
    ("llama4", "Llama-4 (transformers default)", "9bcc2b35f15730186459ff95c30804d7b97eeb97360b71b432f5564aab789f04"),
    ("hermes3", "Hermes-3-Llama-3.1-8B tool_use (also Hermes-2-Pro)",
     "ce62e308475b364e1fc76699dccbddeb9ac08344f90d59719dba86a9922834d9"),
    ("granite4", "Granite-4.1", "fed2756d2d24e127b951dcf139d0b03ab7db8ef23a456128ebc9c2db4901d476"),
    ("ministral3", "Ministral-3-14B-Reasoning-2512", "31b50c917746ef1c2611c2fef122d3ebee690aca5748ab37832734f9ad375da1"),
    ("kimi_k3", "Kimi-K3", "f0c33f4b63ef8403f3dd16e10917440251ba16743c2a36d31675ac04b0ad1a1e"),
    ("laguna", "Laguna-S-2.1", "444819b8ad4612870827ac05b9147fe9e3344d3850cae8c2790898fc514099ff"),
    ("step35", "Step-3.5-Flash", "3a7cb642bf35cb4106cd3895147d8fcded3be856ad56cf6c88510aec879c2427"),
    ("hy3", "Hy3", "84437b9746423f042920c15289ac84d4eba7a50a11ebc05e8b414c460f814873"),
    ("lfm25", "LFM2.5-8B-A1B", "6d65c8804847ad74eea912dd7eca3dc1cf7a457b53a77f47d841a14121910963"),
    ("llama4_pythonic", "Llama-4 pythonic (vLLM tool_chat_template_llama4_pythonic)",
     "fb76136a36a8422930f25fbe3326e9ae0d67e82259c7917b1b71d18ae6934cef"),
)

PROBE_MIN = 0.8
"""Share of a format's markers that must appear in the template source for the markup to fit."""

PROBE_IGNORED = frozenset({"bos", "eos", "media_start", "media_content", "media_pad", "media_end", "vision_start",
                           "vision_end", "image_pad", "video_pad", "image", "attr_close", "budget_open",
                           "budget_close"})
"""Marker names that say nothing about the markup (tokens a template may leave to the tokenizer, media)."""


def fingerprint(source: str) -> str:
    """SHA-256 of a template source with line endings unified and outer whitespace stripped."""
    return hashlib.sha256(source.replace("\r\n", "\n").strip().encode("utf-8")).hexdigest()


@dataclass
class Probe:
    """How much of one format's markup a template spells."""

    format: str
    found: list[str]
    missing: list[str]

    @property
    def score(self) -> float:
        total = len(self.found) + len(self.missing)
        return len(self.found) / total if total else 0.0


@dataclass
class Detection:
    """The verdict: ``format`` (None when nothing fits), ``how`` it was found, and the evidence."""

    template: str
    format: str | None
    how: str                      # "fingerprint", "markup", "none"
    revision: str | None = None   # the known revision a fingerprint names
    candidates: list[str] = field(default_factory=list)   # formats sharing the fitting markup
    probes: list[Probe] = field(default_factory=list)      # best first
    unregistered: str | None = None  # a fingerprint of a format this build lacks

    def describe(self) -> str:
        """One or two plain sentences."""
        if self.how == "fingerprint":
            return (f"{self.template}: {self.format} (official template {self.revision}, matched by fingerprint)")
        if self.unregistered:
            return (f"{self.template}: the {self.revision} template of format {self.unregistered}, which this "
                    "toolwire build does not have")
        if self.how == "markup":
            others = [c for c in self.candidates if c != self.format]
            also = f"; the same markup fits {', '.join(others)} (run toolwire fidelity to tell them apart)" if others else ""
            best = self.probes[0]
            return (f"{self.template}: {self.format} by its markup ({len(best.found)}/{len(best.found) + len(best.missing)}"
                    f" markers), not a known revision of its template{also}")
        close = ", ".join(f"{p.format} ({len(p.found)}/{len(p.found) + len(p.missing)}, lacks "
                          f"{', '.join(p.missing[:3])})" for p in self.probes[:3] if p.found)
        return (f"{self.template}: no toolwire format fits this template; its tool-call markup is none that "
                f"toolwire knows" + (f" (closest: {close})" if close else ""))

    def as_json(self) -> dict[str, Any]:
        return {"template": self.template, "format": self.format, "how": self.how, "revision": self.revision,
                "candidates": self.candidates, "unregistered": self.unregistered,
                "probes": [{"format": p.format, "score": round(p.score, 3), "found": p.found, "missing": p.missing}
                           for p in self.probes[:5]]}


def probe(source: str) -> list[Probe]:
    """Every registered format's markers looked up in ``source``, best fit first."""
    out = []
    for name in formats():
        markers = {k: v for k, v in get_format(name).markers.items() if k not in PROBE_IGNORED and v.strip()}
        found = sorted({v for v in markers.values() if v in source})
        missing = sorted({v for v in markers.values() if v not in source})
        out.append(Probe(name, found, missing))
    out.sort(key=lambda p: (-p.score, -len(p.found), p.format))
    return out


def detect_source(source: str, name: str = "template") -> Detection:
    """Detect the format of a template source (see the module docstring)."""
    digest = fingerprint(source)
    probes = probe(source)
    registered = set(formats())
    for fmt, revision, sha in FINGERPRINTS:
        if sha == digest:
            if fmt in registered:
                return Detection(name, fmt, "fingerprint", revision, [fmt], probes)
            return Detection(name, None, "none", revision, [], probes, unregistered=fmt)
    fitting = [p for p in probes if p.score >= PROBE_MIN]
    if fitting:
        top = fitting[0].score
        tied = [p.format for p in fitting if p.score == top and len(p.found) == len(fitting[0].found)]
        return Detection(name, tied[0], "markup", None, tied, probes)
    return Detection(name, None, "none", None, [], probes)


def load_template_source(path: str) -> tuple[str, str]:
    """``(source, display name)`` of a ``.jinja`` file, a ``tokenizer_config.json`` or a model folder."""
    from toolwire.templates.jinja import chat_template_from_config

    target = Path(path)
    if target.is_dir():
        if (target / "chat_template.jinja").exists():
            return read_text(str(target / "chat_template.jinja"), "template"), target.name
        if not (target / "tokenizer_config.json").exists():
            jinja = sorted(target.glob("*.jinja"))
            if len(jinja) == 1:
                return read_text(str(jinja[0]), "template"), jinja[0].name
            raise BadInput("no_template", f"{path}: no chat_template.jinja or tokenizer_config.json in this folder")
        target = target / "tokenizer_config.json"
    text = read_text(str(target), "template")
    if target.suffix == ".json":
        try:
            json.loads(text)
            source = chat_template_from_config(target)
        except (ValueError, OSError) as exc:
            raise BadInput("invalid_json", f"{target}: {exc}") from None
        if source is None:
            raise BadInput("no_template", f"{target}: holds no chat_template")
        return source, target.parent.name or target.name
    return text, target.name


def detect_path(path: str) -> Detection:
    """:func:`detect_source` of a file or folder (see :func:`load_template_source`)."""
    source, name = load_template_source(path)
    return detect_source(source, name)


__all__ = ["FINGERPRINTS", "Detection", "Probe", "detect_source", "detect_path", "fingerprint", "probe",
           "load_template_source"]
