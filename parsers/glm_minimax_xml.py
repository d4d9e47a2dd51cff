"""Moved: the machinery the XML-call parsers share is :mod:`toolwire.parsers.xml_calls`. This module only keeps
``templates/glm.py``'s ``from toolwire.parsers.glm_minimax_xml import early_close`` working; delete it once that
import names ``xml_calls``."""

from .xml_calls import early_close

__all__ = ["early_close"]
