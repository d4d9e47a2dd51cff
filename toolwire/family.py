"""One declaration per family: everything a model family is, written once.

A :class:`Family` holds a family's markers (a :class:`~toolwire.markers.MarkerTable`), its stop tokens (members of
that table), its reasoning opener and closer, its render options (an :class:`Options` class whose fields name the
template keyword each mirrors, with every alias), its context-policy rule, its template fingerprints and its grammar
description. The renderer (``toolwire.templates``), the parser (``toolwire.parsers``), the registry,
:mod:`toolwire.context_policy`, :mod:`toolwire.grammar`, ``toolwire detect``, the reference runner behind
``toolwire fidelity`` and the engine adapters all read it; none keeps a copy. The declarations themselves are in
:mod:`toolwire.families`.

**Options.** :meth:`Options.resolve` is the one place where option names are translated: toolwire's own names
(``thinking``), the template's keywords (``enable_thinking``, ``thinking_mode`` ...), declared aliases, and Hugging
Face's ``chat_template_kwargs`` (read whole, its keys as keyword options). An option that is not given means what
the family's chat template does when its keyword is unset (Qwen3: thinking on), as ``apply_chat_template`` does.
The same value under two spellings is fine; two different values are an :class:`~toolwire.errors.InvalidOption`
naming both, in every family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping

from .errors import InvalidOption
from .markers import Marker, MarkerTable

if TYPE_CHECKING:
    from toolwire.context_policy.policies import FamilyPolicy


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"

    def __reduce__(self):
        return "UNSET"


UNSET: Any = _Unset()
"""An option's default when the family's template has its own behaviour for the keyword left unset (the option is
then not passed on: the renderer does what the template does without it)."""

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Option:
    """One render option of a family.

    ``template``: the chat-template keyword it mirrors (None: a toolwire switch the template does not read);
    ``aliases``: other names accepted for it (its ``template`` keyword is always accepted too); ``default``: its
    value when not given, which is what the template does with the keyword unset (:data:`UNSET`: the template's own
    behaviour, nothing passed); ``kind``: the accepted type(s) (``bool`` accepts only True / False);
    ``choices``: the accepted values, when they are a closed set; ``check``: a further check, which returns the
    value (possibly normalized) or raises ``ValueError`` with the message users see; ``retains``: for a
    retention switch of the template's own, the value that keeps earlier reasoning its default drops
    (:func:`toolwire.history.stable_options` sets it; :data:`UNSET` for every other option)."""

    kind: Any = object
    default: Any = UNSET
    template: str | None = None
    aliases: tuple[str, ...] = ()
    choices: tuple[Any, ...] | None = None
    check: Callable[[Any], Any] | None = None
    doc: str = ""
    retains: Any = UNSET

    def validate(self, spelling: str, value: Any) -> Any:
        """``value`` checked as this option (given as ``spelling``), or an :class:`InvalidOption` naming it."""
        kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        if object not in kinds and (not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds):
            if kinds == (bool,):
                raise InvalidOption(f"{spelling} must be true or false, got {value!r}", field=spelling)
            names = " or ".join(k.__name__ for k in kinds)
            raise InvalidOption(f"{spelling} must be {_article(names)}, got {value!r}", field=spelling)
        if self.choices is not None and value not in self.choices:
            raise InvalidOption(f"{spelling} must be one of {', '.join(map(repr, self.choices))}, got {value!r}",
                                field=spelling)
        if self.check is not None:
            try:
                return self.check(value)
            except ValueError as exc:
                raise InvalidOption(f"{spelling} {exc}", field=spelling) from None
        return value


def _article(names: str) -> str:
    return ("an " if names[0] in "aeiou" else "a ") + names


def _date(value: str) -> str:
    if not _DATE.match(value):
        raise ValueError(f"must be 'YYYY-MM-DD', got {value!r}")
    return value


def thinking_switch(default: bool, template: str | None = None, doc: str = "") -> Option:
    """The ``thinking`` option of a family: its default (what the template does with its switch unset) and the
    template keyword it mirrors. ``enable_thinking`` is accepted in every family (Hugging Face's and vLLM's common
    spelling), also where the template reads another name or none."""
    aliases = () if template == "enable_thinking" else ("enable_thinking",)
    return Option(bool, default, template=template, aliases=aliases,
                  doc=doc or "thinking mode (for parsing: whether the prompt opened a reasoning block)")


OPTION_HINTS = {
    "thinking_mode": "thinking=True (DeepSeek's thinking_mode='thinking')", "enable_reasoning": "thinking",
    "reasoning": "thinking", "think": "thinking", "date": "current_date", "today": "current_date",
    "date_string": "current_date", "generation_prompt": "add_generation_prompt", "effort": "reasoning_effort",
    "thinking_effort": "reasoning_effort", "clear_reasoning": "drop_thinking", "tool_choice":
    "toolwire.ToolSet(tools).validate(output, tool_choice=...) (render does not take it)",
    "continue_final_message": "add_generation_prompt=False", "join_parts": "join_content_parts",
}
"""What to use instead of option names people bring from other stacks (named in the unknown-option error)."""


class Options:
    """A family's render options: :class:`Option` class attributes (a subclass restates or adds them), and
    :meth:`resolve`, which turns keyword arguments into the resolved values.

    Every family takes the options declared here; a family's subclass restates ``thinking`` with its template
    keyword and default, and adds its own switches. ``normalize`` (a classmethod a family may override) applies
    the rules that tie two options together (Hy3's ``reasoning_effort='no_think'`` is thinking off)."""

    thinking = thinking_switch(False)
    reasoning_effort = Option((str, int), doc="the reasoning effort, where the family has one")
    drop_thinking = Option(bool, True, doc="DeepSeek's switch for dropping earlier reasoning (as its encoders)")
    add_generation_prompt = Option(bool, True, template="add_generation_prompt",
                                   doc="end with the assistant turn's opening (the generation prompt)")
    current_date = Option(str, check=_date, doc="today's date, 'YYYY-MM-DD', for templates that print it")
    policy = Option(str, doc="a context-policy override: keep_all, drop_all, keep_tool_loop (toolwire's own)")
    join_content_parts = Option(bool, False, doc="join list content's text parts where the template refuses them")
    results_in_call_order = Option(bool, False, doc="put parallel tool results in the order of their calls")
    escape_result_markup = Option(bool, False, doc="escape a tool result's spelling of the plain-text result framing")
    media_fallback = Option(str, choices=("user_turn",),
                            doc="user_turn: move tool-result media the family has no slot for into a user message")

    fields: ClassVar[dict[str, Option]] = {}
    """Every option of the family, by toolwire name (filled per class)."""
    spellings: ClassVar[dict[str, str]] = {}
    """Every accepted spelling (name, template keyword, alias) -> the option's toolwire name."""
    COMMON: ClassVar[frozenset[str]] = frozenset({"thinking", "reasoning_effort", "drop_thinking",
                                                  "add_generation_prompt", "current_date", "policy",
                                                  "join_content_parts", "results_in_call_order",
                                                  "escape_result_markup", "media_fallback"})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._index()

    @classmethod
    def _index(cls) -> None:
        fields: dict[str, Option] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Option):
                    fields[name] = value
        spellings: dict[str, str] = {}
        for name, option in fields.items():
            for spelling in (name, option.template, *option.aliases):
                if spelling is None:
                    continue
                if spellings.get(spelling, name) != name:
                    raise TypeError(f"{cls.__name__}: {spelling!r} names both {spellings[spelling]!r} and {name!r}")
                spellings[spelling] = name
        cls.fields, cls.spellings = fields, spellings

    @classmethod
    def extra_names(cls) -> frozenset[str]:
        """The family's own options (beyond the ones every family takes)."""
        return frozenset(cls.fields) - cls.COMMON

    @classmethod
    def resolve(cls, given: Mapping[str, Any], family: str = "") -> dict[str, Any]:
        """The resolved options: each given value checked under the name it was given as, aliases folded onto
        their option, defaults filled in (an :data:`UNSET` default is left out), then :meth:`normalize`.

        ``given`` holds keyword options; None means not given; ``chat_template_kwargs`` (a dict) is read whole, as
        more keyword options. Raises :class:`InvalidOption` naming the field for an unknown name, a bad value, or
        two spellings of one option that disagree."""
        values, seen = cls._collect(given)
        unknown = [k for k in seen if k not in cls.spellings]
        if unknown:
            raise cls.unknown(unknown, family)
        return cls._finish(values)

    @classmethod
    def split(cls, given: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(resolved render options, the rest): :meth:`resolve` for the names this family's options know; the
        others are returned untouched (the parser's own options, when one options dict serves both)."""
        values, seen = cls._collect(given)
        rest = {k: v for k, v in seen.items() if k not in cls.spellings}
        return cls._finish(values), rest

    @classmethod
    def _collect(cls, given: Mapping[str, Any]) -> tuple[dict[str, tuple[str, Any]], dict[str, Any]]:
        seen: dict[str, Any] = {}
        nested = given.get("chat_template_kwargs")
        for key, value in given.items():
            if key != "chat_template_kwargs" and value is not None:
                seen[key] = value
        if nested is not None:
            if not isinstance(nested, Mapping):
                raise InvalidOption(f"chat_template_kwargs must be a dict, not {type(nested).__name__}",
                                    field="chat_template_kwargs")
            for key, value in nested.items():
                if value is None:
                    continue
                if key in seen and seen[key] != value:
                    raise InvalidOption(f"{key}={seen[key]!r} and chat_template_kwargs {key}={value!r} disagree",
                                        field=f"chat_template_kwargs.{key}")
                seen[key] = value
        values: dict[str, tuple[str, Any]] = {}
        for key, value in seen.items():
            name = cls.spellings.get(key)
            if name is None:
                continue
            value = cls.fields[name].validate(key, value)
            if name in values:
                first, before = values[name]
                if before != value:
                    raise InvalidOption(f"{first}={before!r} and {key}={value!r} disagree", field=key)
                continue
            values[name] = (key, value)
        return values, seen

    @classmethod
    def _finish(cls, values: dict[str, tuple[str, Any]]) -> dict[str, Any]:
        out = {name: value for name, (_, value) in values.items()}
        for name, option in cls.fields.items():
            if name not in out and option.default is not UNSET:
                out[name] = option.default
        return cls.normalize(out, given=frozenset(values))

    @classmethod
    def normalize(cls, values: dict[str, Any], given: frozenset[str]) -> dict[str, Any]:
        """Rules tying options together (``given``: the names the caller set); the default changes nothing."""
        return values

    @classmethod
    def unknown(cls, names, family: str = "") -> InvalidOption:
        """The error for option names this family does not take (with hints for names from other stacks)."""
        names = sorted(names)
        hints = [f"{n!r}: use {OPTION_HINTS[n]}" for n in names if n in OPTION_HINTS]
        accepted = sorted(cls.spellings)
        where = f" for format {family!r}" if family else ""
        return InvalidOption(f"unknown option(s) {names}{where} (accepted: {accepted})"
                             + ("; " + "; ".join(hints) if hints else ""), field=names[0])

    @classmethod
    def template_variables(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """Resolved ``values`` as the variables the family's chat template reads (what ``toolwire fidelity`` passes
        to the reference template): each option that mirrors a template keyword, under that keyword."""
        return {option.template: values[name] for name, option in cls.fields.items()
                if option.template is not None and name in values}


Options._index()


@dataclass(frozen=True)
class Fingerprint:
    """A known revision of a family's official chat template: its name, the SHA-256 of its normalized source (line
    endings unified, outer whitespace stripped; :func:`toolwire.workbench.detect.fingerprint`) and the family
    options it is rendered with (Granite 4.0: ``version="4.0"``). Ports (llama.cpp's) are not fingerprinted:
    ``toolwire detect`` finds them by what they render and says they are ports."""

    revision: str
    sha256: str
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    """Everything one model family is, declared once (see the module docstring).

    ``module``: the implementation, ``toolwire.templates.<module>`` (renderer) and ``toolwire.parsers.<module>``
    (parser); ``stop``: the roles in ``markers`` generation stops on (the model's ``generation_config`` eos);
    ``reasoning``: the reasoning block's (opener, closer) as written, or None when the family has none;
    ``grammar``: the grammar description (:mod:`toolwire.grammar.families`), None when the family has none;
    ``template_losses``: where the official template loses data and toolwire deliberately does not follow it
    (names of :data:`toolwire.workbench.divergences.DIVERGENCES` rows, listed in ``docs/fidelity.md``).
    Construction checks the declaration (stop tokens in the table, a known option class)."""

    name: str
    module: str
    reference: str
    markers: MarkerTable
    stop: tuple[Marker, ...]
    reasoning: tuple[str, str] | None
    options: type[Options]
    policy: FamilyPolicy
    fingerprints: tuple[Fingerprint, ...] = ()
    grammar: str | None = None
    template_losses: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        missing = [role.name for role in self.stop if role not in self.markers]
        if missing or not self.stop:
            raise ValueError(f"family {self.name}: stop tokens {missing or '()'} are not in its marker table")
        if not (isinstance(self.options, type) and issubclass(self.options, Options)):
            raise TypeError(f"family {self.name}: options must be an Options subclass")

    @property
    def stop_tokens(self) -> tuple[str, ...]:
        """The stop tokens as text (what generation stops on)."""
        return tuple(self.markers[role] for role in self.stop)

    def format(self) -> Any:
        """The family's :class:`toolwire.Format`: its renderer module's ``FORMATS`` entry (what
        :func:`toolwire.get_format` returns; imported on first use)."""
        import importlib

        return importlib.import_module(f"toolwire.templates.{self.module}").FORMATS[self.name]

    def __repr__(self) -> str:
        return f"<toolwire.Family {self.name}>"

    def __reduce__(self):
        # a declaration is a constant of toolwire.families.<module>: pickled by name, unpickled as that object
        return (_declared, (self.module, self.name))


def _declared(module: str, name: str) -> Family:
    import importlib

    found = {f.name: f for f in importlib.import_module(f"toolwire.families.{module}").FAMILIES}
    return found[name]


__all__ = ["Family", "Fingerprint", "Option", "Options", "UNSET", "OPTION_HINTS", "thinking_switch"]
