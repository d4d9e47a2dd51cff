"""Deprecated alias of :mod:`toolwire.dispatch.canonical` (its home since the package layout of issue 19).

``import toolwire.canonical`` keeps working for a deprecation period and gives the very same module object;
new code should import ``toolwire.dispatch.canonical``.
"""

import sys

from toolwire.dispatch import canonical as _module

sys.modules[__name__] = _module
