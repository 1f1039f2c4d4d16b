"""google-adk's planners (``google.adk.planners``), at its module paths.

``BuiltInPlanner(thinking_config=...)`` asks the model to think before it answers: an
agent given it sends ``thinking_config`` with every request (Gemini's thinking
settings; other providers ignore it), as google-adk's does. ``PlanReActPlanner``, and any
``BasePlanner`` subclass of the user's, is applied by the flow as google-adk applies
it (``planners._apply``): its planning instruction joins the system instruction of
every request, whose thought marks are cleared, and the model's answers are rewritten
by its ``process_planning_response`` (a PlanReActPlanner's plan and reasoning become
thoughts, its final answer the text the user reads). An object of another type
assigned to ``agent.planner`` after the agent was made (its constructor refuses one)
is applied as a ``PlanReActPlanner``, as google-adk applies it.
"""

from .base_planner import BasePlanner
from .built_in_planner import BuiltInPlanner
from .plan_re_act_planner import PlanReActPlanner

__all__ = ["BasePlanner", "BuiltInPlanner", "PlanReActPlanner"]
