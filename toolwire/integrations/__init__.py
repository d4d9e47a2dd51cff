"""Adapters between toolwire and serving stacks or client APIs; each imports its host lazily, and nothing in
core imports an integration.

- :mod:`toolwire.integrations.openai`: OpenAI Chat Completions messages, stream deltas, finish reasons and
  the tool error envelope (formerly ``toolwire.openai_compat``);
- :mod:`toolwire.integrations.vllm` / :mod:`toolwire.integrations.sglang`: tool-call and reasoning parsers
  for the serving engines (shared logic in :mod:`toolwire.integrations.engine_stream`), vLLM's prompt renderer
  (:mod:`toolwire.integrations.vllm_render`, the prompt handed to the parser through
  :mod:`toolwire.integrations.engine_prompts`) and the fail-closed wire (:mod:`toolwire.integrations.wire_policy`);
- :mod:`toolwire.integrations.ray`: Ray Data over the :mod:`toolwire.batch` mappers.
"""
