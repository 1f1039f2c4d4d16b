"""google-adk's ``a2a.executor``: :class:`~.a2a_agent_executor.A2aAgentExecutor` (the
A2A executor of an agent's tasks, on :class:`adk_actors.a2a.RunnerExecutor`), its
:class:`~.config.A2aAgentExecutorConfig` with :class:`~.config.ExecuteInterceptor`
hooks, and the :class:`~.executor_context.ExecutorContext` those hooks are given."""

from .a2a_agent_executor import A2aAgentExecutor
from .config import A2aAgentExecutorConfig, ExecuteInterceptor
from .executor_context import ExecutorContext

__all__ = ["A2aAgentExecutor", "A2aAgentExecutorConfig", "ExecuteInterceptor", "ExecutorContext"]
