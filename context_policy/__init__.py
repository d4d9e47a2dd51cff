"""Context policy: turn and step boundaries, and which earlier reasoning each family keeps, with reasons.

>>> from toolwire.context_policy import plan
>>> p = plan(messages, "deepseek_v4", thinking=True)
>>> p.turns, p.steps, p.decisions, p.warnings
"""

from .boundaries import Boundaries, find_boundaries, is_real_user, is_wrapped_tool_result
from .plan import ContextPlan, family_policy, plan
from .policies import OVERRIDES, Decision
from .warnings import CODES as WARNING_CODES, PlanWarning

__all__ = ["plan", "ContextPlan", "Decision", "PlanWarning", "WARNING_CODES", "OVERRIDES",
           "family_policy", "find_boundaries", "Boundaries", "is_real_user", "is_wrapped_tool_result"]
