"""google-adk's planners (``google.adk.planners``), at its module paths.

``BuiltInPlanner(thinking_config=...)`` asks the model to think before it answers: an
agent given it sends ``thinking_config`` with every request (Gemini's thinking
settings; other providers ignore it), as google-adk's does. ``PlanReActPlanner`` gives
google-adk's two steps (a planning instruction, and the model's tagged answer split
into thoughts and a final answer) as methods, but the adk-actors flow does not apply
them yet: an agent given one is refused when it is defined
(:class:`AgentDefinitionError`), rather than run without its planning.
"""

from .base_planner import BasePlanner
from .built_in_planner import BuiltInPlanner
from .plan_re_act_planner import PlanReActPlanner

__all__ = ["BasePlanner", "BuiltInPlanner", "PlanReActPlanner"]
