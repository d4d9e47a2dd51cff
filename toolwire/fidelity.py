"""Deprecated alias of :mod:`toolwire.workbench.fidelity` (its home since the package layout of issue 19).

``import toolwire.fidelity`` keeps working for a deprecation period and gives the very same module object;
new code should import ``toolwire.workbench.fidelity``.
"""

import sys

from toolwire.workbench import fidelity as _module

sys.modules[__name__] = _module
