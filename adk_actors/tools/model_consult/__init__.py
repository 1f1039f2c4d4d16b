"""google-adk's ``google.adk.tools.model_consult``, as far as it is built here: the
:class:`ForceEscalationPlugin` (the advisor tool itself, ``ModelConsultTool``, and its
observability plugin are not built; any tool named ``model_consult`` serves)."""

from ._force_escalation_plugin import ForceEscalationPlugin

__all__ = ["ForceEscalationPlugin"]
