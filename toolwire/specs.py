"""Deprecated alias of :mod:`toolwire.dispatch.specs` (its home since the package layout of issue 19).

``import toolwire.specs`` keeps working for a deprecation period and gives the very same module object;
new code should import ``toolwire.dispatch.specs``.
"""

import sys

from toolwire.dispatch import specs as _module

sys.modules[__name__] = _module
