"""google-adk's module path of :class:`ForceEscalationPlugin` (its code lives in
``adk_actors.plugins._force_escalation_plugin``, beside the other plugins)."""

from ...plugins._force_escalation_plugin import CONSULT_REQUIRED_STATUS, ForceEscalationPlugin

__all__ = ["CONSULT_REQUIRED_STATUS", "ForceEscalationPlugin"]
