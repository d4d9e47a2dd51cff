"""placeholder"""
from __future__ import annotations
from .kimi import KimiParser as MistralParser
