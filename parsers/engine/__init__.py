"""The shared parsing engines, apart from the family modules (``toolwire.parsers.<module>``, one per family group).

* :mod:`.stream` - :class:`StreamParser`, the base of every family's parser (text or token-id input, events, the
  result); :mod:`.call_builder` - incremental call building (JSON fragments as values arrive); :mod:`.tools` -
  the declared tools' names and schemas; :mod:`.token_input` - where control ids wrote text;
  :mod:`.token_spans` - which fed ids each event came from; :mod:`.stop_tokens` - a stop token left at the end;
  :mod:`.steps` - the step-table parser; :mod:`.lexer` - marker scanning.
* JSON: :mod:`.safe_json` (bounded decoding, the one number grammar), :mod:`.json_scan` (the incremental value
  scanner), :mod:`.json_repair` (the repair ladder), :mod:`.json_arguments` (raw argument streaming);
  :mod:`.schema_coerce` (values typed by the declared schema).
* Wire shapes shared by several families: :mod:`.marker_json` (JSON calls between markers: Kimi K2, DeepSeek V3.1 /
  R1, Mistral), :mod:`.tagged_json` (JSON call objects in tags: Qwen, Hermes 3, Granite 4), :mod:`.xml_calls` and
  :mod:`.xml_tool` (XML-style calls: Qwen3-Coder and its kin, GLM, MiniMax, Hy3), :mod:`.dsml` (DSML: DeepSeek,
  GigaChat), :mod:`.pythonic` (Python call syntax, never evaluated: LFM2.5, Llama 4 pythonic).
"""
