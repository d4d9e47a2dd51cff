"""Deprecated alias of :mod:`toolwire.integrations.openai` (its home since the package layout of issue 19).

``import toolwire.openai_compat`` keeps working for a deprecation period and gives the very same module object;
new code should import ``toolwire.integrations.openai``.
"""

import sys

from toolwire.integrations import openai as _module

sys.modules[__name__] = _module
