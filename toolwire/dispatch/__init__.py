"""The dispatch hand-off: what an application needs between a parsed call and running the tool.

- :mod:`toolwire.dispatch.specs`: ``ToolSpec`` / ``tool_specs``, tool definitions in any vocabulary;
- :mod:`toolwire.dispatch.validation`: ``ToolSet``, checking calls against their JSON Schemas and ``tool_choice``;
- :mod:`toolwire.dispatch.canonical`: canonical arguments, ``canonical_json`` and call fingerprints.

It imports only the core (``toolwire.errors``, ``toolwire.limits``, ``toolwire.models``, ``toolwire.output``).
"""
