"""Deprecated alias of :mod:`toolwire.workbench.cli` (its home since the package layout of issue 19).

``import toolwire.cli`` keeps working for a deprecation period and gives the very same module object;
new code should import ``toolwire.workbench.cli``.
"""

import sys

from toolwire.workbench import cli as _module

sys.modules[__name__] = _module
