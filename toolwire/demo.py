"""Deprecated alias of :mod:`toolwire.workbench.demo` (its home since the package layout of issue 19).

``import toolwire.demo`` keeps working for a deprecation period and gives the very same module object;
new code should import ``toolwire.workbench.demo``.
"""

import sys

from toolwire.workbench import demo as _module

sys.modules[__name__] = _module
