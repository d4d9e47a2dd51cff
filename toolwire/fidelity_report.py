"""Deprecated alias of :mod:`toolwire.workbench.fidelity_report` (its home since the package layout of issue 19).

``import toolwire.fidelity_report`` keeps working for a deprecation period and gives the very same module object;
new code should import ``toolwire.workbench.fidelity_report``.
"""

import sys

from toolwire.workbench import fidelity_report as _module

sys.modules[__name__] = _module
