"""Human approval of a sensitive tool (seed 001 row 22), offline.

``wire_money`` cannot run without a human's approval: the run waits (its actor stays
responsive) until someone decides, for at most two minutes::

    adk-actors run hitl "pay 100 to bob"          # waits ...
    adk-actors approvals list hitl                # ... in another terminal
    adk-actors approvals approve hitl APPROVAL_ID # or: deny hitl APPROVAL_ID --reason "..."
"""

from __future__ import annotations

import re
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.engine import ConfirmationPolicy
from adk_actors.models import ScriptedModel, call


def wire_money(amount: int, to: str) -> dict[str, Any]:
    """Send money (sensitive: a human approves every call)."""
    return {"sent": amount, "to": to, "reference": f"TX-{amount}-{to.upper()}"}


def _payments(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        result = last.function_responses[0].response
        if "error" in result:
            return f"The payment did not go through: {result['error']}"
        return f"Sent {result['sent']} to {result['to']} (ref {result['reference']})."
    match = re.search(r"pay (\d+) to (\w+)", last.text.lower())
    if not match:
        return "Tell me whom to pay and how much, e.g. 'pay 100 to bob'."
    return call("wire_money", amount=int(match.group(1)), to=match.group(2))


root_agent = LlmAgent(name="payments", model=ScriptedModel(fallback=_payments), tools=[wire_money],
                      confirmation_policy=ConfirmationPolicy(tools=["wire_money"], timeout=120,
                                                             hint="a payment needs your approval"))
