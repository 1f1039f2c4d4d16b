"""google-adk's ``google.adk.tools.model_consult``: a fast executor model consults a
stronger advisor model mid-task (:class:`ModelConsultTool`, how much of the session
it hands over, :class:`ModelConsultContextConfig`), a plugin that makes it consult
(:class:`ForceEscalationPlugin`), and one that counts what consulting costs
(:class:`ModelConsultObservabilityPlugin`, its :class:`ModelConsultReport`,
:class:`ModelConsultStats` and :class:`ModelConsultUsage`)."""

from ._context import ModelConsultContextConfig
from ._force_escalation_plugin import ForceEscalationPlugin
from ._model_consult_tool import ModelConsultTool
from ._observability_plugin import (
    ModelConsultObservabilityPlugin,
    ModelConsultReport,
    ModelConsultStats,
    ModelConsultUsage,
)

__all__ = ["ForceEscalationPlugin", "ModelConsultContextConfig", "ModelConsultObservabilityPlugin",
           "ModelConsultReport", "ModelConsultStats", "ModelConsultTool", "ModelConsultUsage"]
