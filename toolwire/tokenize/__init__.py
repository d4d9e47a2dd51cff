"""Injection-safe token ids for rendered prompts, and token ids back to (text, is_special) pieces.

:func:`encode_segments` turns a :class:`~toolwire.prompt.RenderedPrompt`'s segments into token ids in
which only the control tokens the format itself wrote can appear as control ids:

* in a ``special`` segment every control token of the tokenizer (``<|im_start|>``, DeepSeek V4's
  ``｜DSML｜`` inside ``<｜DSML｜tool_calls>``) becomes its single id; a special segment that holds no control
  token of this tokenizer is an error (:class:`MarkerNotInVocabulary`: wrong tokenizer for the format) when
  it is shaped like one control token (``<|name|>``, ``<｜name｜>``, ``[NAME]``, ``<name>``); other marker
  fragments (DSML's ``" string="true">`` closing a parameter tag) are plain text to every tokenizer;
* all other text (``template`` and ``content`` segments, and the plain text around control tokens inside a
  special segment) is joined into runs and encoded as plain text: the tokenizer's model and pre-tokenizer
  only, never its added-token matcher, so user text that spells ``<|im_end|>`` stays ordinary tokens.

Because a tokenizer also splits its input at control tokens before encoding the text between them, the ids
equal ``tokenizer(prompt.text, add_special_tokens=False)`` whenever no content spells a control token
(no BOS is ever added: a format that wants BOS writes it as a special segment).

:class:`TokenDecoder` is the inverse, for stream parsers fed token ids: ``feed(ids)`` returns
:class:`TokenPiece` items whose ``special`` flag says whether the text came from a control-token id (a real
marker) or from ordinary tokens (text, even when it spells a marker). UTF-8 sequences split across tokens
are held back until complete; the work per id is bounded (linear in the output).

Accepted tokenizers: a ``transformers`` tokenizer, a ``tokenizers.Tokenizer``, any object with
``encode_ordinary(text)`` and ``encode_single_token(text)`` (``tiktoken.Encoding``), and mistral-common
tokenizers (``MistralTokenizer``, an instruct tokenizer, ``Tekkenizer`` or ``SentencePieceTokenizer``).

The modules, one job each:

* :mod:`~toolwire.tokenize.vocabularies`: :func:`vocabulary` and the :class:`Vocabulary` adapters (one per
  tokenizer kind) with their control-token tables;
* :mod:`~toolwire.tokenize.pretokenize`: the Python pre-tokenizer the ``tokenizers`` adapter uses where it
  gives the native pipeline's ids;
* :mod:`~toolwire.tokenize.encode`: :func:`encode_segments` and :func:`control_token_count`;
* :mod:`~toolwire.tokenize.decode`: :class:`TokenDecoder`, :class:`TokenPiece` and :func:`token_pieces`;
* :mod:`~toolwire.tokenize.load`: :func:`load_tokenizer` (offline) and the extra each tokenizer kind needs;
* :mod:`~toolwire.tokenize.byte_level`: :func:`byte_tokenizer`, a byte-level tokenizer with chosen control
  tokens (a format's markers), for token ids without the model's tokenizer.
"""

from __future__ import annotations

from .decode import TokenDecoder, TokenPiece, token_pieces
from .encode import MarkerNotInVocabulary, control_token_count, encode_segments
from .byte_level import ByteTokenizer, byte_tokenizer
from .load import load_tokenizer
from .vocabularies import SPACE_MARK  # noqa: F401 - a public name of the module before the split
from .vocabularies import UnsupportedTokenizer, Vocabulary, vocabulary

__all__ = [
    "encode_segments", "control_token_count", "vocabulary", "Vocabulary", "TokenDecoder", "TokenPiece",
    "token_pieces", "load_tokenizer", "MarkerNotInVocabulary", "UnsupportedTokenizer", "ByteTokenizer",
    "byte_tokenizer",
]
