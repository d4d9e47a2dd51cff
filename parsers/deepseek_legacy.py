"""placeholder"""
from __future__ import annotations
from .kimi import KimiParser as DeepSeekV31Parser, KimiParser as DeepSeekR1Parser
