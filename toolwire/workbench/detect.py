"""``toolwire detect``: which toolwire format a chat template belongs to.

Two kinds of evidence, both data:

* fingerprints: the SHA-256 of each known revision of an official template (line endings unified, outer
  whitespace stripped), declared with its family (``Family.fingerprints``, :func:`known_revisions`). A hit names
  the format and the revision: the template is one toolwire's
  renderer is checked against. Only official templates are listed: a port (llama.cpp's DeepSeek V3.2 / V4
  templates of formats DeepSeek publishes as Python encoders) is found by what it renders, and said to be
  one. A revision that needs a family option (Granite 4.0: ``version="4.0"``) names it
  (``Fingerprint.options``), and ``toolwire fidelity`` uses it.
* probing: each registered format's marker table (``Format.markers``) looked up in the template source and
  in what the template renders for a probe conversation (system, user, a reasoning turn with a tool call,
  its result, an answer; :func:`rendered_markup`), so markers a template builds by string concatenation
  count. Only a format whose tool-call and turn markup all appear (:data:`PROBE_MIN`) fits; the formats that
  fit as well as the best one are the candidates, and ``toolwire fidelity`` tells them apart by comparing each.

Adding a family is declaring its fingerprints with it (its markers are found from its ``Format``).
When nothing fits, the verdict says so and names the closest formats and what they miss. A file that is not
a template (empty, or a Jinja syntax error) is bad input (:class:`~toolwire.workbench.inputs.BadInput`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from toolwire.family import Fingerprint
from toolwire.registry import families, formats, get_format

from .inputs import BadInput, read_text

def known_revisions() -> list[tuple[str, Fingerprint]]:
    """``(format, fingerprint)`` of every known revision of an official template: the families' declarations
    (``Family.fingerprints``)."""
    return [(name, fp) for name, family in sorted(families().items()) for fp in family.fingerprints]


PROBE_MIN = 0.8
"""Share of a format's markers that must appear in the template source for the markup to fit."""

PROBE_IGNORED = frozenset({"bos", "eos", "media_start", "media_content", "media_pad", "media_end", "vision_start",
                           "vision_end", "image_pad", "video_pad", "image", "attr_close", "budget_open",
                           "budget_close", "latest_reminder"})
"""Marker names that say nothing about the markup (tokens a template may leave to the tokenizer, media, and
DSML's ``latest_reminder`` role, which the probe conversation does not use)."""

PROBE_TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
PROBE_MESSAGES = [
    {"role": "system", "content": "You are a travel assistant."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "reasoning_content": "I need the weather.", "tool_calls": [
        {"id": "a1b2c3d4e", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
    {"role": "tool", "tool_call_id": "a1b2c3d4e", "name": "get_weather", "content": "18C"},
    {"role": "assistant", "content": "It is 18C.", "reasoning_content": "Report it."},
    {"role": "user", "content": "And Rome?"},
]
"""The conversation :func:`rendered_markup` renders (a 9-character call id, as Mistral's templates require; the
call's argument, ``Oslo``, is written nowhere else, so a render holding it is a template that renders calls)."""

PROBE_CALL_VALUE = "Oslo"


def fingerprint(source: str) -> str:
    """SHA-256 of a template source with line endings unified and outer whitespace stripped."""
    return hashlib.sha256(source.replace("\r\n", "\n").strip().encode("utf-8")).hexdigest()


@dataclass
class Probe:
    """How much of one format's markup a template spells: ``found`` and ``missing`` among the markers required
    (the format's whole marker table in the template source; or, when the template renders tool calls, the
    markers the format's own renderer writes for the probe conversation, in the source or the renders)."""

    format: str
    found: list[str]
    missing: list[str]
    rendered_only: list[str] = field(default_factory=list)  # found only in what the template renders

    @property
    def score(self) -> float:
        total = len(self.found) + len(self.missing)
        return len(self.found) / total if total else 0.0


@dataclass
class Detection:
    """The verdict: ``format`` (None when nothing fits), ``how`` it was found, and the evidence."""

    template: str
    format: str | None
    how: str                      # "fingerprint", "markup" (in the source), "render" (in what it renders), "none"
    revision: str | None = None   # the known revision a fingerprint names
    candidates: list[str] = field(default_factory=list)   # the formats fitting as well as the best, best first
    probes: list[Probe] = field(default_factory=list)      # best first
    unregistered: str | None = None  # a fingerprint of a format this build lacks
    options: dict[str, Any] = field(default_factory=dict)  # family options of the revision (Fingerprint.options)

    def describe(self) -> str:
        """One or two plain sentences."""
        if self.how == "fingerprint":
            with_options = "".join(f" with {k}={v!r}" for k, v in self.options.items())
            return (f"{self.template}: {self.format}{with_options} (official template {self.revision}, matched by "
                    "fingerprint)")
        if self.unregistered:
            return (f"{self.template}: the {self.revision} template of format {self.unregistered}, which this "
                    "toolwire build does not have")
        if self.how in ("markup", "render"):
            others = [c for c in self.candidates if c != self.format]
            also = (f"; the same markup fits {', '.join(others)} (toolwire fidelity compares each and keeps the "
                    "best)") if others else ""
            best = self.probes[0]
            by = "its markup" if self.how == "markup" else "what it renders"
            if any(fmt == self.format for fmt, _ in known_revisions()):
                what = "not a known revision of its official template"
            else:
                what = (f"toolwire knows no official chat template of {self.format} (its reference: "
                        f"{get_format(self.format).reference}), so this template is a port")
            return (f"{self.template}: {self.format} by {by} ({len(best.found)}/{len(best.found) + len(best.missing)}"
                    f" markers), {what}{also}")
        close = ", ".join(f"{p.format} ({len(p.found)}/{len(p.found) + len(p.missing)}, lacks "
                          f"{', '.join(p.missing[:3])})" for p in self.probes[:3] if p.found)
        return (f"{self.template}: no toolwire format fits this template; its tool-call markup is none that "
                f"toolwire knows" + (f" (closest: {close})" if close else ""))

    def as_json(self) -> dict[str, Any]:
        return {"template": self.template, "format": self.format, "how": self.how, "revision": self.revision,
                "candidates": self.candidates, "unregistered": self.unregistered, "options": self.options,
                "probes": [{"format": p.format, "score": round(p.score, 3), "found": p.found, "missing": p.missing,
                            "rendered_only": p.rendered_only} for p in self.probes[:5]]}


def rendered_markup(template: Any) -> str:
    """What ``template`` (a :class:`~toolwire.templates.jinja.ChatTemplate`) writes for :data:`PROBE_MESSAGES`,
    with arguments as objects and as JSON text, thinking on and off; the renders that succeed, joined ("" when
    none does)."""
    from toolwire.templates.jinja import decode_arguments

    texts = []
    switches = template.variables & {"enable_thinking", "thinking"}  # its family is not known yet: both spellings
    for arguments in ("object", "string"):
        messages = decode_arguments(PROBE_MESSAGES, arguments=arguments)
        for thinking in (True, False):
            try:
                texts.append(template.render(messages, PROBE_TOOLS, add_generation_prompt=True,
                                             **dict.fromkeys(switches, thinking)))
            except Exception:  # noqa: BLE001 - a template that refuses this probe shows its markup in another one
                continue
    return "\n".join(texts)


def _table(name: str) -> frozenset[str]:
    return frozenset(v for k, v in get_format(name).markers.items() if k not in PROBE_IGNORED and v.strip())


@lru_cache(maxsize=None)
def native_markers(name: str) -> frozenset[str] | None:
    """The markers of format ``name`` that its own renderer writes for the probe conversation (thinking on and
    off); None when it renders neither."""
    from toolwire.errors import ToolwireError

    fmt = get_format(name)
    texts = []
    for thinking in (True, False):
        try:
            texts.append(fmt.render(PROBE_MESSAGES, PROBE_TOOLS, thinking=thinking).text)
        except ToolwireError:
            continue
    if not texts:
        return None
    text = "\n".join(texts)
    return frozenset(m for m in _table(name) if m in text)


def probe(source: str, rendered: str = "") -> list[Probe]:
    """Every registered format's markers looked up in ``source`` and in ``rendered`` (what the template wrote
    for the probe conversation), best fit first. In the source, a format's whole marker table counts; when the
    renders hold the probe's tool call, the markers the format itself writes for that conversation count too,
    and the better of the two fits is kept (a table entry the format never writes for it cannot be missed)."""
    out = []
    renders_calls = PROBE_CALL_VALUE in rendered
    for name in formats():
        table = _table(name)
        seen = {m for m in table if m in source or m in rendered}
        candidates = [(sorted(m for m in table if m in source), sorted(m for m in table if m not in source))]
        written = native_markers(name) if renders_calls else None
        if written:
            candidates.append((sorted(seen & written), sorted(written - seen)))
        found, missing = max(candidates, key=lambda c: (len(c[0]) / max(1, len(c[0]) + len(c[1])), len(c[0])))
        out.append(Probe(name, found, missing, sorted(m for m in found if m not in source)))
    out.sort(key=lambda p: (-p.score, -len(p.found), p.format))
    return out


def compile_template(source: str, name: str = "template", **kwargs: Any) -> Any:
    """``source`` as a :class:`~toolwire.templates.jinja.ChatTemplate`; an empty file or a Jinja syntax error is
    :class:`BadInput` (``empty_template``, ``template_syntax``) naming ``name``."""
    import jinja2

    from toolwire.templates.jinja import ChatTemplate

    if not source.strip():
        raise BadInput("empty_template", f"template {name}: the file is empty")
    try:
        return ChatTemplate(source, **kwargs)
    except jinja2.TemplateSyntaxError as exc:
        raise BadInput("template_syntax", f"template {name}, line {exc.lineno}: {exc.message}") from None


def detect_source(source: str, name: str = "template") -> Detection:
    """Detect the format of a template source (see the module docstring). Raises :class:`BadInput` for an
    empty source or a Jinja syntax error."""
    template = compile_template(source, name)
    digest = fingerprint(source)
    probes = probe(source, rendered_markup(template))
    registered = set(formats())
    for fmt, known in known_revisions():
        if known.sha256 == digest:
            if fmt in registered:  # (a declared family whose module failed to import is not)
                return Detection(name, fmt, "fingerprint", known.revision, [fmt], probes, options=dict(known.options))
            return Detection(name, None, "none", known.revision, [], probes, unregistered=fmt)
    fitting = [p for p in probes if p.score >= PROBE_MIN]
    if fitting:
        best = fitting[0]
        how = "render" if best.rendered_only else "markup"
        shared = [p.format for p in fitting if p.score == best.score]  # the same share of their markup
        return Detection(name, best.format, how, None, shared, probes)
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


__all__ = ["known_revisions", "Detection", "Probe", "compile_template", "detect_source",
           "detect_path", "fingerprint", "probe", "rendered_markup", "load_template_source"]
