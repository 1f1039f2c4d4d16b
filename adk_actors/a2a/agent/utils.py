"""google-adk's ``google.adk.a2a.agent.utils``: the steps a
:class:`~adk_actors.a2a.agent.RemoteA2aAgent` runs to apply its ``config`` to one
exchange, for an agent of one's own that sends A2A messages the same way (the same
names, arguments and order as google-adk's; each raises
:class:`~adk_actors.a2a.agent.config.InterceptorError` when a hook fails):

* :func:`execute_before_card_request_interceptors`: the headers for a card's fetch;
* :func:`execute_before_request_interceptors`: the message and its parameters;
* :func:`execute_after_request_interceptors`: an event made from a response.
"""

from __future__ import annotations

from ...agents._a2a_config import (
    execute_after_request_interceptors,
    execute_before_card_request_interceptors,
    execute_before_request_interceptors,
)

__all__ = ["execute_after_request_interceptors", "execute_before_card_request_interceptors",
           "execute_before_request_interceptors"]
