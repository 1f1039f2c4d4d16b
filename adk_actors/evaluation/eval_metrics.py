"""google-adk's ``google.adk.evaluation.eval_metrics`` path (see :mod:`adk_actors.evals`).
A criterion is given as a dict (or in ``test_config.json``); the judge criteria are
here as classes to build one with (``LlmAsAJudgeCriterion(...).model_dump()``)."""

from ..evals import (
    BaseCriterion,
    DurationDetails,
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalStatus,
    HallucinationsCriterion,
    JudgeModelOptions,
    LlmAsAJudgeCriterion,
    LlmBackedUserSimulatorCriterion,
    MetricInfo,
    Rubric,
    RubricsBasedCriterion,
)

__all__ = ["BaseCriterion", "DurationDetails", "EvalMetric", "EvalMetricResult", "EvalMetricResultPerInvocation", "EvalStatus",
           "HallucinationsCriterion", "JudgeModelOptions", "LlmAsAJudgeCriterion",
           "LlmBackedUserSimulatorCriterion", "MetricInfo", "Rubric",
           "RubricsBasedCriterion"]
