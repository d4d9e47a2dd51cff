"""Adapters between toolwire and serving stacks or client APIs. Each module imports core and
:mod:`toolwire.dispatch`; nothing in core imports an integration.

- :mod:`toolwire.integrations.openai`: OpenAI Chat Completions messages, stream deltas, finish reasons and
  the tool error envelope (formerly ``toolwire.openai_compat``);
- vLLM, SGLang and Ray adapters will live here too (``vllm.py``, ``sglang.py``, ``ray.py``).
"""
