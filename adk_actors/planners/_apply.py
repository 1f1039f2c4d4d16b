"""How a flow applies an agent's planner, at the two places google-adk 2.13's
NL-planning request and response processors do (the flow calls these; the planners
themselves only answer): a turn's steps, and a live run (its setup request, and each
response of the live model).

* Which planner: the agent's ``planner`` when it is a :class:`BasePlanner`; a
  ``planner`` that is set (truthy) but is no BasePlanner (an object assigned to the
  field after the agent was made: the constructor refuses one) is replaced by a
  fresh :class:`PlanReActPlanner` each time it is asked for, as google-adk 2.13's
  ``_get_planner`` replaces it (:func:`agent_planner`); its own methods are never
  called.
* Building a request: a planner that is no :class:`BuiltInPlanner`
  (:func:`instruction_planner`) is asked for its planning instruction, which goes
  into the system instruction after the agent's own instruction and identity, and
  the thought marks of the request's contents are cleared
  (:func:`without_thought_marks`), so the model reads its earlier plans as text;
  :func:`planning_call` is what asks the planner, for ``compiler.build_request``.
* An answer: a planner whose ``process_planning_response`` is not
  :class:`BuiltInPlanner`'s (:func:`answer_planner`) rewrites the answer's parts
  (:func:`planned_content`), after the after-model hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._types import Content, LlmRequest, Part
from ..types import ours
from .base_planner import BasePlanner
from .built_in_planner import BuiltInPlanner
from .plan_re_act_planner import PlanReActPlanner

__all__ = ["agent_planner", "answer_planner", "instruction_planner", "planned_content", "planning_call", "without_thought_marks"]


def agent_planner(agent: Any) -> BasePlanner | None:
    """The planner the flow applies for ``agent``, in order: None when it has no
    ``planner`` field or the field is None or falsy; the planner itself when it is a
    :class:`BasePlanner`; otherwise a new :class:`PlanReActPlanner` (google-adk's
    fallback for a planner of another type)."""
    planner = getattr(agent, "planner", None)
    if not planner:
        return None
    return planner if isinstance(planner, BasePlanner) else PlanReActPlanner()


def instruction_planner(agent: Any) -> BasePlanner | None:
    """``agent``'s planner (:func:`agent_planner`) when it plans in the request (any
    planner but a :class:`BuiltInPlanner`, whose only part is its thinking config),
    else None."""
    planner = agent_planner(agent)
    return None if planner is None or isinstance(planner, BuiltInPlanner) else planner


def planning_call(agent: Any, context: Callable[[], Any]) -> Callable[[LlmRequest], str | None] | None:
    """What asks ``agent``'s planner for its planning instruction (the ``planning``
    of ``compiler.build_request``) when it plans in the request
    (:func:`instruction_planner`), else None: called with the request so far, it makes
    a context with ``context()`` and returns the planner's
    ``build_planning_instruction`` of that context and the request (what that raises
    is raised)."""
    planner = instruction_planner(agent)
    if planner is None:
        return None
    return lambda request: planner.build_planning_instruction(context(), request)


def answer_planner(agent: Any) -> BasePlanner | None:
    """``agent``'s planner (:func:`agent_planner`) when it rewrites the model's
    answers: one whose ``process_planning_response`` is its own (a
    :class:`BuiltInPlanner` subclass that defines one counts too), else None."""
    planner = agent_planner(agent)
    if planner is None:
        return None
    if type(planner).process_planning_response is BuiltInPlanner.process_planning_response:
        return None
    return planner


def without_thought_marks(contents: Sequence[Content]) -> list[Content]:
    """``contents`` with every part's ``thought`` mark cleared (set to None). A
    content with a marked part is replaced by a copy whose marked parts are copies;
    the others, and every part without a mark, are the same objects (a session's
    events are never changed)."""
    cleared: list[Content] = []
    for content in contents:
        if not any(part.thought is not None for part in content.parts):
            cleared.append(content)
            continue
        parts = tuple(part.model_copy(update={"thought": None}) if part.thought is not None else part
                      for part in content.parts)
        cleared.append(content.model_copy(update={"parts": parts}))
    return cleared


def planned_content(planner: BasePlanner, callback_context: Any, content: Content | None) -> Content | None:
    """``content`` as ``planner`` keeps it, in order: None or a content without parts
    is returned as it is; otherwise the planner's ``process_planning_response`` gets
    copies of the parts (in a list it may change, as google-adk's may), and the
    content gets the parts it returns (google.genai's made ours), or, when it returns
    None or no parts, the copies as the planner left them. What the planner raises
    is raised."""
    if content is None or not content.parts:
        return content
    parts = [part.model_copy() for part in content.parts]
    processed = planner.process_planning_response(callback_context, parts)
    kept = processed if processed else parts
    return content.model_copy(update={"parts": tuple(ours(part, Part) for part in kept)})
