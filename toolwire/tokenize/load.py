"""Loading a tokenizer from local files, offline, and the toolwire extra each kind of tokenizer needs."""

from __future__ import annotations

from typing import Any

from .vocabularies import UnsupportedTokenizer


def load_tokenizer(path: str) -> Any:
    """Load a tokenizer from local files, without network access.

    * a folder with ``tokenizer.json`` (or ``tokenizer.json.gz``), or ``vocab.json`` + ``merges.txt``: a
      ``transformers`` tokenizer when transformers is installed, else a ``tokenizers.Tokenizer``;
    * a folder with a tiktoken ``tokenizer.model`` and ``special_tokens.json`` (``pattern`` and
      ``special_tokens``, as Meta's llama-models ship them): a ``tiktoken.Encoding``;
    * a folder with ``o200k_base.tiktoken``: o200k with gpt-oss's harmony control tokens (``toolwire[harmony]``:
      tiktoken, and ``openai-harmony`` for their ids);
    * ``mistral:v1`` ... ``mistral:v7``, ``mistral:v3-tekken``, or a mistral-common tokenizer file (``tekken*.json``,
      ``*.model.v*``): a mistral-common ``MistralTokenizer``.

    A package the kind of tokenizer needs that is not installed is a :class:`~toolwire.errors.MissingExtra` naming
    the extra (``toolwire[hf]``, ``[harmony]``, ``[mistral]``), raised before anything is loaded.
    """
    try:
        return _load_tokenizer(path)
    except ModuleNotFoundError as exc:
        extra = _TOKENIZER_EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        from toolwire.errors import MissingExtra

        err = MissingExtra(f"the tokenizer {path} needs the {exc.name.split('.')[0]} package: "
                           f"pip install 'toolwire[{extra}]'")
        err.name = exc.name.split(".")[0]
        raise err from None


_TOKENIZER_EXTRAS = {"tokenizers": "hf", "transformers": "hf", "tiktoken": "harmony", "tiktoken_ext": "harmony",
                     "openai_harmony": "harmony", "mistral_common": "mistral", "sentencepiece": "mistral"}
"""Module -> the toolwire extra that installs it, for the tokenizers :func:`load_tokenizer` reads."""


def _load_tokenizer(path: str) -> Any:
    from pathlib import Path

    if path.startswith("mistral:"):
        return _load_mistral(path.split(":", 1)[1])
    folder = Path(path)
    if folder.is_file():
        if folder.name.startswith("tekken") or ".model.v" in folder.name:
            from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

            return MistralTokenizer.from_file(str(folder))
        raise UnsupportedTokenizer(f"{path}: give a tokenizer folder, or a mistral-common tokenizer file")
    if (folder / "o200k_base.tiktoken").exists():
        return _load_o200k(folder)
    if (folder / "tokenizer.model").exists() and (folder / "special_tokens.json").exists():
        return _load_tiktoken_model(folder)
    gz = folder / "tokenizer.json.gz"
    if (folder / "tokenizer.json").exists() or (folder / "vocab.json").exists() or gz.exists():
        try:
            import transformers
        except ImportError:
            transformers = None
        if transformers is not None and not gz.exists():
            return transformers.AutoTokenizer.from_pretrained(str(folder))
        if not gz.exists() and not (folder / "tokenizer.json").exists():  # vocab.json + merges.txt: transformers
            raise ModuleNotFoundError("No module named 'transformers'", name="transformers")
        import tokenizers

        if gz.exists():
            import gzip

            return tokenizers.Tokenizer.from_str(gzip.decompress(gz.read_bytes()).decode("utf-8"))
        return tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    raise UnsupportedTokenizer(f"{path}: no tokenizer.json, vocab.json/merges.txt, tiktoken model or mistral file")


def _load_mistral(version: str) -> Any:
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    if version == "v3-tekken":
        return MistralTokenizer.v3(is_tekken=True)
    factory = getattr(MistralTokenizer, version, None)
    if factory is None or not version.startswith("v"):
        raise UnsupportedTokenizer(f"unknown mistral-common tokenizer {version!r}")
    return factory()


def _load_tiktoken_model(folder: Any) -> Any:
    import json

    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    meta = json.loads((folder / "special_tokens.json").read_text(encoding="utf-8"))
    return tiktoken.Encoding(folder.name, pat_str=meta["pattern"], special_tokens=meta["special_tokens"],
                             mergeable_ranks=load_tiktoken_bpe(str(folder / "tokenizer.model")))


def _load_o200k(folder: Any) -> Any:
    import os

    import tiktoken
    import tiktoken_ext.openai_public as public
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(folder / "o200k_base.tiktoken"))
    real_loader = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *a, **k: ranks  # o200k_base() names its URL; use the local file
    try:
        spec = public.o200k_base()
    finally:
        public.load_tiktoken_bpe = real_loader
    specials = dict(spec["special_tokens"])
    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", str(folder))
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding  # the harmony ids: not optional

    harmony = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    specials.update({t: harmony.encode(t, allowed_special="all")[0] for t in harmony.special_tokens_set})
    return tiktoken.Encoding("o200k_harmony", pat_str=spec["pat_str"], mergeable_ranks=ranks, special_tokens=specials)
