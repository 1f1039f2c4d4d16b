"""google-adk's ``google.adk.evaluation.eval_case`` path (see :mod:`adk_actors.evals`)."""

from ..evals import (
    ConversationScenario,
    EvalCase,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    SessionInput,
)

__all__ = ["ConversationScenario", "EvalCase", "IntermediateData", "Invocation", "InvocationEvent",
           "InvocationEvents", "SessionInput"]
