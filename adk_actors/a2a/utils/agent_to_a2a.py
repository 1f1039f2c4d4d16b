"""google-adk's ``to_a2a``: an agent served over A2A (protocol 1.0, and the 0.3 method
names a2a-sdk still takes) as an ASGI app, ``a2a_app = to_a2a(root_agent, port=8001)``
then ``uvicorn agent:a2a_app --port 8001``.

The agent runs in the serving process, as google-adk's does: on ``runner`` when given
(an in-process :class:`adk_actors.runners.Runner`, or a host's
:class:`adk_actors.runtime.Runner` to run its tasks on that host), else on an
:class:`adk_actors.runners.InMemoryRunner` of its own named by the agent (``adk_agent``
when unnamed). Its A2A tasks are run by
:class:`~adk_actors.a2a.executor.a2a_agent_executor.A2aAgentExecutor`, which is
:class:`adk_actors.a2a.RunnerExecutor` (the host's A2A server's executor: a task's
context id is its session, its last text answer its artifact, a failed run its
failed state with the reason); the protocol is
a2a-sdk's (its request handler and routes), the user a task runs as is the
authenticated caller's name, else google-adk's ``A2A_USER_<context id>``.

In order, when the app starts (its lifespan; uvicorn runs it): the card is the one
given (an ``AgentCard``, or the path of its JSON file, read when ``to_a2a`` is called:
a bad one is a ``ValueError`` there) or else the one
:class:`~adk_actors.a2a.utils.agent_card_builder.AgentCardBuilder` builds from the
agent, its URL ``{protocol}://{host}:{port}/{rpc_path}``; the card is served at
``/{rpc_path}/.well-known/agent-card.json`` and JSON-RPC at ``/{rpc_path}`` (``/``
with no ``rpc_path``); then the caller's ``lifespan`` runs inside. A card that cannot
be built fails the app's start.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from a2a.client.card_resolver import parse_agent_card
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import LegacyRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import (
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    PushNotificationConfigStore,
    TaskStore,
)
from a2a.types import AgentCard, SecurityScheme
from starlette.applications import Starlette

from ...runners import InMemoryRunner
from ..executor.a2a_agent_executor import A2aAgentExecutor
from .agent_card_builder import AgentCardBuilder

__all__ = ["to_a2a"]

logger = logging.getLogger("adk_actors.a2a")

CARD_PATH = "/.well-known/agent-card.json"


def to_a2a(agent: Any, *, host: str = "localhost", port: int = 8000, protocol: str = "http", rpc_path: str = "",
           agent_card: AgentCard | str | None = None, push_config_store: PushNotificationConfigStore | None = None,
           task_store: TaskStore | None = None, runner: Any = None,
           lifespan: Callable[[Starlette], AbstractAsyncContextManager[None]] | None = None,
           agent_executor_factory: Callable[[Any], AgentExecutor] | None = None,
           security_schemes: dict[str, SecurityScheme] | None = None,
           default_skill_security: list[dict[str, list[str]]] | None = None) -> Starlette:
    """The agent's A2A app (see the module). ``agent_executor_factory(runner)``: the
    executor of its tasks instead of an A2aAgentExecutor; ``task_store`` and
    ``push_config_store``: a2a-sdk's, in memory when not given. ``security_schemes``
    and ``default_skill_security`` go on the built card only (nothing enforces them);
    with ``agent_card`` given they are ignored, and logged, as is an ``rpc_path`` the
    given card's URL does not follow."""
    if runner is None:
        runner = InMemoryRunner(agent, app_name=getattr(agent, "name", "") or "adk_agent")
    executor = agent_executor_factory(runner) if agent_executor_factory is not None else A2aAgentExecutor(
        runner=runner)
    prefix = f"/{rpc_path.strip('/')}" if rpc_path.strip("/") else ""
    given = _card_from(agent_card)
    if given is not None and prefix:
        logger.warning("to_a2a serves under %r, but the agent_card given names its own URL: clients reading it "
                       "may not reach the agent", prefix)
    if given is not None and (security_schemes is not None or default_skill_security is not None):
        logger.warning("to_a2a was given an agent_card: security_schemes and default_skill_security are ignored")
        security_schemes = default_skill_security = None
    builder = AgentCardBuilder(agent=agent, rpc_url=f"{protocol}://{host}:{port}{prefix}/",
                               security_schemes=security_schemes, default_skill_security=default_skill_security)
    tasks = task_store if task_store is not None else InMemoryTaskStore()
    pushes = push_config_store if push_config_store is not None else InMemoryPushNotificationConfigStore()

    @asynccontextmanager
    async def serving(app: Starlette) -> AsyncIterator[None]:
        card = given if given is not None else await builder.build()
        handler = LegacyRequestHandler(agent_executor=executor, task_store=tasks, agent_card=card,
                                       push_config_store=pushes)
        app.router.routes.extend([*create_agent_card_routes(card, card_url=f"{prefix}{CARD_PATH}"),
                                  *create_jsonrpc_routes(handler, prefix or "/", enable_v0_3_compat=True)])
        if lifespan is None:
            yield
        else:
            async with lifespan(app):
                yield

    return Starlette(lifespan=serving)


def _card_from(agent_card: AgentCard | str | None) -> AgentCard | None:
    """The card given, or read from the JSON file it names (``ValueError`` if it cannot be)."""
    if not isinstance(agent_card, str):
        return agent_card
    try:
        card: AgentCard = parse_agent_card(json.loads(Path(agent_card).read_text(encoding="utf-8")))
    except Exception as error:
        raise ValueError(f"Failed to load agent card from {agent_card}: {error}") from error
    return card

