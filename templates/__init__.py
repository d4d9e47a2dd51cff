"""Renderers, one module per wire-format family. Each module exposes ``FORMATS: dict[str, Format]``."""
