"""Deprecated alias of :mod:`toolwire.dispatch.validation` (its home since the package layout of issue 19).

``import toolwire.validation`` keeps working for a deprecation period and gives the very same module object;
new code should import ``toolwire.dispatch.validation``.
"""

import sys

from toolwire.dispatch import validation as _module

sys.modules[__name__] = _module
