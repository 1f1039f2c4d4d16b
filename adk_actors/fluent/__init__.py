"""A fluent builder for agents, with adk-fluent's names and meaning (seed 004).

``Agent("name", model).instruct(...).writes("key")`` and the operators ``>>`` (in
sequence; ``>> Route(...)`` or ``>> {value: agent}`` routes on the state), ``|`` (at once), ``* n`` / ``* until(pred)`` (loop), ``//`` (fallback)
and ``@ Schema`` (typed answer) build our plain agents, so everything that runs
agents runs these. ``P`` composes instructions, ``C`` says what an agent sees of
the conversation, ``S`` transforms the state between steps. ``build()`` checks the
pipeline's contracts first (logged; ``.checked()`` raises ``ContractError``); ``ask("...")`` runs one turn on an
embedded engine. The full reference: docs/fluent.md.
"""

from ._artifacts import A, ArtifactStep, ArtifactStepAgent
from ._builders import (
    Agent,
    Builder,
    Fallback,
    FallbackAgent,
    FanOut,
    GatedSequence,
    Loop,
    Pipeline,
    Timed,
    TimeoutAgent,
)
from ._context import C, CTransform
from ._contracts import ContractError
from ._dispatch import DispatchAgent, JoinAgent, dispatch, join
from ._eval import (
    ComparisonReport,
    ComparisonSuite,
    E,
    ECase,
    EComposite,
    ECriterion,
    EvalReport,
    EvalSuite,
    MetricDelta,
    RegressionError,
    RegressionResult,
)
from ._guards import G, GuardChain, GuardViolation, PIIFinding
from ._m import M, MComposite
from ._middleware import (
    DispatchDirective,
    LoopDirective,
    Middleware,
    MiddlewarePlugin,
    TraceContext,
)
from ._middleware_kit import (
    CircuitBreakerMiddleware,
    CostTracker,
    DedupMiddleware,
    DispatchLogMiddleware,
    FallbackModelMiddleware,
    LatencyMiddleware,
    ModelCacheMiddleware,
    RateLimitMiddleware,
    RetryMiddleware,
    StructuredLogMiddleware,
    TimeoutMiddleware,
    TopologyLogMiddleware,
)
from ._primitives import (
    GateAgent,
    MapOverAgent,
    RaceAgent,
    TapAgent,
    expect,
    gate,
    map_over,
    race,
    tap,
)
from ._prompt import P, PTransform
from ._route import Route, RouteAgent
from ._state import S, StateDelta, StateReplacement, StateStep, STransform, UntilCheck, until
from ._tools import T, ToolChain

__all__ = [
    "A",
    "Agent",
    "ArtifactStep",
    "ArtifactStepAgent",
    "Builder",
    "C",
    "CTransform",
    "CircuitBreakerMiddleware",
    "ComparisonReport",
    "ComparisonSuite",
    "ContractError",
    "CostTracker",
    "DedupMiddleware",
    "DispatchAgent",
    "DispatchDirective",
    "DispatchLogMiddleware",
    "E",
    "ECase",
    "EComposite",
    "ECriterion",
    "EvalReport",
    "EvalSuite",
    "Fallback",
    "FallbackAgent",
    "FallbackModelMiddleware",
    "FanOut",
    "G",
    "GateAgent",
    "GatedSequence",
    "GuardChain",
    "GuardViolation",
    "JoinAgent",
    "LatencyMiddleware",
    "Loop",
    "LoopDirective",
    "M",
    "MComposite",
    "MapOverAgent",
    "MetricDelta",
    "MetricsMiddleware",
    "Middleware",
    "MiddlewarePlugin",
    "ModelCacheMiddleware",
    "P",
    "PIIFinding",
    "PTransform",
    "Pipeline",
    "RaceAgent",
    "RateLimitMiddleware",
    "RegressionError",
    "RegressionResult",
    "RetryMiddleware",
    "Route",
    "RouteAgent",
    "S",
    "STransform",
    "StateDelta",
    "StateReplacement",
    "StateStep",
    "StructuredLogMiddleware",
    "T",
    "TapAgent",
    "Timed",
    "TimeoutAgent",
    "TimeoutMiddleware",
    "ToolChain",
    "TopologyLogMiddleware",
    "TraceContext",
    "TraceMiddleware",
    "UntilCheck",
    "dispatch",
    "expect",
    "gate",
    "join",
    "map_over",
    "race",
    "tap",
    "until",
]
