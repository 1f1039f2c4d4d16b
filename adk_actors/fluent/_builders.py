"""The builders: ``Agent`` and the workflows ``Pipeline``, ``FanOut``, ``Loop``,
``Fallback``, with adk-fluent's operators.

A builder collects settings and ``build()`` makes our plain agents (LlmAgent,
SequentialAgent, ParallelAgent, LoopAgent, and the small :class:`StateStep`,
:class:`UntilCheck` and :class:`FallbackAgent`), so the compiler, engine, host, HTTP
and A2A see nothing new. Setters change the builder and return it, until it is
used as an operand: then it is frozen, and a setter works on a copy (adk-fluent's
copy-on-write), so an agent can be reused in several pipelines.

Operators: ``a >> b`` sequence (``a_then_b``), ``a | b`` parallel (``a_and_b``),
``a * n`` loop n times (``a_xn``), ``a * until(pred, max=n)`` loop until the state
satisfies pred, ``a // b`` fallback (``a_or_b``: b answers when a fails), ``a @
Schema`` typed output. A chain of one operator stays flat.
"""

from __future__ import annotations

import asyncio
import copy
import difflib
import itertools
import logging
import re
import time
import warnings
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from .._types import Content, Event, LlmResponse
from ..agents import AgentBase, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from ..compiler import CompileContext, Verbatim, substitute_vars
from ..engine import App
from ..runners import InMemoryRunner
from ..tools import AgentTool, load_memory
from ._chat import ChatSession, chat_session
from ._context import C, CTransform
from ._contracts import check_contracts, contract_problems
from ._eval import E, EvalSuite
from ._explain import explain
from ._guards import GuardChain
from ._m import MComposite
from ._mermaid import to_mermaid
from ._middleware import MiddlewarePlugin
from ._prompt import PTransform
from ._route import Route, RouteAgent
from ._state import StateStep, STransform, Until, UntilCheck, step_name
from ._tools import ToolChain

_log = logging.getLogger("adk_actors.fluent")

__all__ = ["GATE_ASKED", "Agent", "Builder", "Fallback", "FallbackAgent", "FanOut", "GatedSequence", "Loop", "Pipeline",
           "Timed", "TimeoutAgent"]

#: adk-fluent's config field names that ``with_`` takes, and the setter of each
_FIELD_SETTERS = {"instruction": "instruct", "description": "describe", "output_key": "writes"}
_CALLBACKS = ("before_agent", "after_agent", "before_model", "after_model", "before_tool", "after_tool",
              "on_model_error", "on_tool_error")


class FallbackAgent(AgentBase):
    """Tries its children in order; the first that finishes without raising answers.
    A failed child's events (its error included) stay in the session; when every
    child fails, the last error is raised."""

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        failure: BaseException | None = None
        for attempt, child in enumerate(self.sub_agents):
            ctx.check_cancelled()
            await ctx.topology("on_fallback_attempt", self.name, child.name, attempt, failure)
            try:
                async for event in child.run(ctx.for_agent(child)):
                    yield event
            except Exception as error:
                failure = error
                continue
            return
        if failure is not None:
            raise failure


#: what a gate's question event carries in its ``custom_metadata`` (see ``GatedSequence``)
GATE_ASKED = "fluent_gate_asked"


class GatedSequence(SequentialAgent):
    """A ``>>`` pipeline with a gate in it: its steps in order, but it stops after a
    step in which a gate asked for approval (its question event carries
    :data:`GATE_ASKED`), so what comes after waits for the approval (adk-fluent's
    documented meaning; a SequentialAgent goes on after an escalation)."""

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        for child in self.sub_agents:
            ctx.check_cancelled()
            asked = False
            async for event in child.run(ctx.for_agent(child)):
                yield event
                asked = asked or bool(event.custom_metadata and event.custom_metadata.get(GATE_ASKED))
            if asked:
                return


class TimeoutAgent(AgentBase):
    """``builder.timeout(seconds)``: the agent's events as they come; past ``seconds``
    it is stopped and the run fails with ``TimeoutError`` (what it committed before
    stays)."""

    seconds: float

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        body = self.sub_agents[0]
        deadline = time.monotonic() + self.seconds
        events = body.run(ctx.for_agent(body)).__aiter__()
        try:
            while True:
                try:
                    event = await asyncio.wait_for(events.__anext__(), max(0.0, deadline - time.monotonic()))
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    await ctx.topology("on_timeout", self.name, self.seconds, True)
                    raise TimeoutError(f"Agent '{body.name}' exceeded {self.seconds}s timeout") from None
                yield event
        finally:
            await events.aclose()
        await ctx.topology("on_timeout", self.name, self.seconds, False)



class Builder:
    """What every builder shares: the operators, build, ask."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._frozen = False
        self._check_mode: Literal["log", "raise", "off"] = "log"
        self._middlewares: list[Any] = []

    # -- copy-on-write -------------------------------------------------------
    def _edit(self) -> Any:
        return self._copy() if self._frozen else self

    def _copy(self) -> Any:
        """An unfrozen copy whose lists and dicts are its own."""
        twin = copy.copy(self)
        twin.__dict__.update({k: copy.copy(v) if isinstance(v, list | dict) else v for k, v in self.__dict__.items()})
        twin._frozen = False
        return twin

    def _operand(self) -> Any:
        self._frozen = True
        return self

    def clone(self, new_name: str) -> Any:
        """An independent copy named ``new_name`` (its settings copied: later setters
        on either leave the other as it is)."""
        twin = self._copy()
        twin.name = new_name
        return twin

    def with_(self, **overrides: Any) -> Any:
        """A copy with ``overrides`` applied by their setters (``name=`` renames it;
        adk-fluent's field names ``instruction``, ``description``, ``output_key`` are
        taken for ``instruct``, ``describe``, ``writes``); this builder stays as it is."""
        twin = self.clone(overrides.pop("name", self.name))
        for field, value in overrides.items():
            twin = getattr(twin, _FIELD_SETTERS.get(field, field))(value)
        return twin

    def validate(self, strict: bool = False) -> Any:
        """Check the contracts and build once, whatever the check mode, and return this
        builder; ValueError naming the builder and what is wrong otherwise (a contract
        problem or a failing build). ``strict`` is adk-fluent's (it raises on warnings
        too): every contract problem here is an error, so it changes nothing."""
        try:
            check_contracts(self)
            unique_helper_names(self._build())
        except Exception as error:
            raise ValueError(f"Validation failed for {type(self).__name__}({self.name!r}): {error}") from error
        return self

    def to_mermaid(self, *, show_contracts: bool = True, show_data_flow: bool = True) -> str:
        """The tree as a Mermaid graph, in adk-fluent's layout (see ``_mermaid``)."""
        return to_mermaid(self, show_contracts=show_contracts, show_data_flow=show_data_flow)

    def explain(self) -> str:
        """What this builder will make, in plain text (see ``_explain``)."""
        return explain(self)

    def session(self) -> AbstractAsyncContextManager[ChatSession]:
        """``async with builder.session() as chat: await chat.send("...")``: a
        conversation of several turns with the built agent on an embedded engine."""
        return chat_session(self.build(), self.plugins())

    def __dir__(self) -> list[str]:
        """The setters too (callbacks are made on demand), for a REPL's completion."""
        return sorted({*super().__dir__(), *_CALLBACKS, *(f"{slot}_if" for slot in _CALLBACKS)})

    def middleware(self, mw: Any) -> Any:
        """Add a middleware (an ``M`` chain, or an object with hooks: see
        :mod:`adk_actors.fluent._middleware`). Middleware is the whole app's, as
        adk-fluent's: an operator's result keeps both sides' (each once, in order), and
        ``to_app``, ``ask``, ``session`` run them as one plugin."""
        if isinstance(mw, ToolChain):
            raise TypeError("middleware() received a TComposite (tool chain). Did you mean .tools(...)? Use "
                            ".middleware() for middleware/MComposite, .tools() for TComposite.")
        builder = self._edit()
        builder._middlewares.extend(mw.to_stack() if isinstance(mw, MComposite) else [mw])
        return builder

    def plugins(self) -> tuple[Any, ...]:
        """The plugins this builder's app runs: its middleware as one, or none."""
        return (MiddlewarePlugin(self._middlewares),) if self._middlewares else ()

    def to_app(self, *, plugins: Any = (), policies: Any = (), resume_interrupted: int = 0) -> App:
        """An :class:`~adk_actors.engine.App` of the built tree, with this builder's
        middleware (and ``plugins``, ``policies``): what a host's ``[apps]`` entry may name."""
        return App(root_agent=self.build(), plugins=(*self.plugins(), *plugins), policies=tuple(policies),
                   resume_interrupted=resume_interrupted)

    def eval(self, prompt: str, *, expect: str | None = None, criteria: Any = None) -> EvalSuite:
        """A suite of one case (``await builder.eval("q", expect="a").run()``); its criteria
        ``criteria``, else the answer's match when ``expect`` is given (see ``_eval``)."""
        suite = EvalSuite(self).case(prompt, expect=expect)
        if criteria is not None:
            suite.criteria(criteria)
        elif expect is not None:
            suite.criteria(E.response_match())
        return suite

    def eval_suite(self) -> EvalSuite:
        """An empty :class:`EvalSuite` of this builder's agent."""
        return EvalSuite(self)

    def checked(self) -> Any:
        """Make ``build()`` raise :class:`ContractError` on a contract problem instead of
        logging it (adk-fluent's ``.checked()``)."""
        builder = self._edit()
        builder._check_mode = "raise"
        return builder

    def strict(self) -> Any:
        """adk-fluent's ``.strict()`` (raise on warnings too): every contract problem
        here is an error, so this is :meth:`checked`."""
        return self.checked()

    def unchecked(self) -> Any:
        """Build without the contract checks (see :mod:`adk_actors.fluent`)."""
        builder = self._edit()
        builder._check_mode = "off"
        return builder

    # -- operators -----------------------------------------------------------
    def __rshift__(self, other: Any) -> Pipeline:
        """A sequence; a :class:`Route` (or a dict: a ``Route`` on the key this agent
        writes, one ``eq`` per entry) ends a pipeline named ``<name>_routed``."""
        if isinstance(other, dict):
            key = getattr(self, "writes_key", None)
            if not key:
                raise ValueError("Left side of >> dict must have .writes() set so the router knows which state "
                                 "key to check.")
            route = Route(key)
            for value, agent in other.items():
                route.eq(value, agent)
            other = route
        if isinstance(other, Route):
            routed = Pipeline(f"{self.name}_routed")
            for step in [*(self._steps if isinstance(self, Pipeline) else [self]), other]:
                routed = routed.step(step)
            return routed
        return Pipeline._joined(self, other)

    def __rrshift__(self, other: Any) -> Pipeline:
        return Pipeline._joined(other, self)

    def __or__(self, other: Any) -> FanOut:
        if not isinstance(other, Builder):
            return NotImplemented
        return FanOut._joined(self, other)

    def __mul__(self, times: int | Until) -> Loop:
        if isinstance(times, Until):
            loop = Loop(f"{self.name}_x{times.max}").max_iterations(times.max)
            loop._until = times.predicate
        elif isinstance(times, int) and not isinstance(times, bool):
            if times < 1:
                raise ValueError(f"a loop runs at least once, got {self.name} * {times}")
            loop = Loop(f"{self.name}_x{times}").max_iterations(times)
        else:
            return NotImplemented
        loop._steps = list(self._steps) if isinstance(self, Pipeline) else [self._operand()]
        loop._middlewares = list(self._middlewares)
        return loop

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> Fallback:
        return Fallback._joined(self, other)

    # -- building and running -------------------------------------------------
    def _build(self) -> Any:
        raise NotImplementedError

    def build(self) -> Any:
        """Our plain agent tree. The contract checks run first, and by the check mode:
        by default each problem is logged as a warning (logger ``adk_actors.fluent``)
        and the tree is built, as adk-fluent's ``build()`` does (a key the caller seeds
        in the session state is no mistake); after :meth:`checked` (or :meth:`strict`)
        a problem raises :class:`ContractError` naming the agents and key, and nothing
        is built; after :meth:`unchecked` they are not looked for."""
        if self._check_mode == "raise":
            check_contracts(self)
        elif self._check_mode == "log":
            for problem in contract_problems(self):
                _log.warning("contract of %s: %s", self.name, problem)
        return unique_helper_names(self._build())

    def loop_until(self, predicate: Callable[[Mapping[str, Any]], Any], *, max_iterations: int = 10) -> Loop:
        """``self * until(predicate, max=max_iterations)``: repeated until ``predicate(state)`` holds."""
        return self * Until(predicate, max_iterations)

    def loop_while(self, predicate: Callable[[Mapping[str, Any]], Any], *, max_iterations: int = 3) -> Loop:
        """Repeated while ``predicate(state)`` holds (adk-fluent's default: at most 3 rounds)."""
        return self.loop_until(lambda state: not predicate(state), max_iterations=max_iterations)

    def timeout(self, seconds: float) -> Timed:
        """This step with a time limit (a :class:`TimeoutAgent`): a new builder,
        ``<name>_timeout_N``."""
        timed = Timed(f"{self.name}_timeout_{next(_timeouts)}", self._operand(), seconds)
        timed._middlewares = list(self._middlewares)
        return timed

    def test(self, prompt: str, *, contains: str | None = None, matches: str | None = None,
             equals: str | None = None) -> Any:
        """A smoke test: :meth:`ask` ``prompt``, then AssertionError (saying what was
        expected and what came) unless the answer contains / matches (a regular
        expression) / equals (stripped) what is given. Returns the builder."""
        answer = self.ask(prompt)
        for failed, expected in ((contains is not None and contains not in answer, f"contains {contains!r}"),
                                 (matches is not None and not re.search(matches, answer), f"matches {matches!r}"),
                                 (equals is not None and answer.strip() != equals.strip(), repr(equals))):
            if failed:
                raise AssertionError(f"Agent {self.name!r} test failed:\n  prompt:   {prompt!r}\n"
                                     f"  expected: {expected}\n  got:      {answer!r}")
        return self

    def mock(self, responses: Any) -> Any:
        """Canned answers instead of model calls (a ``before_model`` callback, as
        adk-fluent's): a list, answered in turn and again from the start; a function
        of the request; or, on any builder, a dict of agent name -> answer (or list)
        for the agents of its tree (ValueError naming those not found)."""
        if not isinstance(responses, dict):
            raise TypeError(f"{type(self).__name__}.mock takes a dict of agent name -> answers")
        found: set[str] = set()
        mocked = _mock_tree(self, responses, found)
        missing = sorted(set(responses) - found)
        if missing:
            raise ValueError(f"mock() could not find agent(s): {', '.join(repr(m) for m in missing)}")
        return mocked

    async def events(self, prompt: str) -> AsyncIterator[Event]:
        """Every event of one turn on an embedded engine (in-memory sessions), but the
        user's own."""
        runner = InMemoryRunner(self.build(), app_name=f"_ask_{self.name}", plugins=self.plugins())
        async for event in _turn(runner, prompt):
            yield event

    async def ask_async(self, prompt: str) -> str:
        """One turn on an embedded engine (in-memory sessions): the last text answered."""
        return _answer([event async for event in self.events(prompt)])

    def ask(self, prompt: str) -> str:
        """:meth:`ask_async` from synchronous code (a RuntimeError inside an event loop)."""
        answer: str = _sync(self.ask_async(prompt), f"{self.name}.ask()", ".ask_async()")
        return answer

    async def stream(self, prompt: str) -> AsyncIterator[str]:
        """The text of each part of each event of one turn, as they come (adk-fluent's)."""
        async for event in self.events(prompt):
            for part in event.content.parts if event.content is not None else ():
                if part.text:
                    yield part.text

    async def map_async(self, prompts: list[str], *, concurrency: int = 5) -> list[str]:
        """:meth:`ask_async` for each prompt, ``concurrency`` at a time, on one agent and
        engine (a session each): the answers, in order."""
        runner = InMemoryRunner(self.build(), app_name=f"_ask_{self.name}", plugins=self.plugins())
        gate = asyncio.Semaphore(concurrency)

        async def one(prompt: str) -> str:
            async with gate:
                return _answer([event async for event in _turn(runner, prompt)])

        return list(await asyncio.gather(*(one(prompt) for prompt in prompts)))

    def map(self, prompts: list[str], *, concurrency: int = 5) -> list[str]:
        """:meth:`map_async` from synchronous code (a RuntimeError inside an event loop)."""
        answers: list[str] = _sync(self.map_async(prompts, concurrency=concurrency), f"{self.name}.map()",
                                   ".map_async()")
        return answers


async def _turn(runner: Any, prompt: str) -> AsyncIterator[Event]:
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="_ask_user")
    async for event in runner.run_async(user_id="_ask_user", session_id=session.id,
                                        new_message=Content.user(prompt)):
        if event.author != "user":
            yield event


def _answer(events: list[Event]) -> str:
    """The last text answered (not a partial piece)."""
    texts = [e.content.text for e in events if e.content is not None and e.content.text and not e.partial]
    return texts[-1] if texts else ""


def _sync(coroutine: Any, what: str, instead: str) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    coroutine.close()
    raise RuntimeError(f"{what} called inside a running event loop; await {instead} instead")


def _unknown_setter(builder: Any, name: str) -> str:
    """adk-fluent's words for a setter that does not exist: the closest one, then all."""
    known = sorted({n for n in dir(type(builder)) if not n.startswith("_")} | set(_CALLBACKS)
                   | {f"{slot}_if" for slot in _CALLBACKS})
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" Did you mean '.{close[0]}'?" if close else ""
    return f"{name!r} is not a recognized field on {type(builder).__name__}.{hint} Available: {', '.join(known)}"


def _mock_tree(node: Any, responses: dict[str, Any], found: set[str]) -> Any:
    """``node`` (a copy where anything below it changes) with the named agents mocked."""
    if isinstance(node, Agent):
        if node.name in responses:
            found.add(node.name)
            answers = responses[node.name]
            return node.mock([answers] if isinstance(answers, str) else answers)
        return node
    if isinstance(node, _Workflow):
        steps = [_mock_tree(step, responses, found) for step in node._steps]
        if any(new is not old for new, old in zip(steps, node._steps, strict=True)):
            node = node._edit()
            node._steps = steps
    return node


def built(item: Any) -> Any:
    """A step as an agent: a builder built, a state transform or a function of the
    state as a StateStep, an agent as it is."""
    if isinstance(item, Builder):
        return item._build()
    if isinstance(item, Route):
        return item.build(built)
    if isinstance(item, STransform):
        return StateStep(name=item.name, transform=item)
    if callable(item) and not isinstance(item, AgentBase):
        name = step_name(item)
        return StateStep(name=name, transform=STransform(name, item))
    return item


def unique_helper_names(root: Any) -> Any:
    """Numbers the builder's own helper steps (state steps, until checks) whose names
    repeat in the tree: ``pick_x``, ``pick_x_2``."""
    seen: dict[str, int] = {}
    stack = [root]
    while stack:
        agent = stack.pop(0)
        seen[agent.name] = seen.get(agent.name, 0) + 1
        if seen[agent.name] > 1 and isinstance(agent, StateStep | UntilCheck | RouteAgent):
            agent.name = f"{agent.name}_{seen[agent.name]}"
        stack.extend(agent.sub_agents)
    return root


class Agent(Builder):
    """An LlmAgent, step by step: ``Agent("name", model).instruct(...).writes(...)``."""

    kind = "agent"

    def __init__(self, name: str, model: Any = None) -> None:
        super().__init__(name)
        self._config: dict[str, Any] = {"model": model} if model is not None else {}
        self._tools: list[Any] = []
        self._sub_agents: list[Any] = []
        self._callbacks: dict[str, list[Any]] = {}
        self._context: CTransform | None = None
        self._instruction: Any = ""
        self.reads_keys: tuple[str, ...] = ()
        self.writes_key: str | None = None
        self.produces_schema: type[BaseModel] | None = None
        self.consumes_schema: type[BaseModel] | None = None

    def _set(self, key: str, value: Any) -> Agent:
        builder: Agent = self._edit()
        builder._config[key] = value
        return builder

    def model(self, model: Any) -> Agent:
        return self._set("model", model)

    def instruct(self, instruction: str | PTransform | Callable[[Any], Any]) -> Agent:
        """The instruction: text (``{key}`` filled from state), a function of the
        request's context, or ``P`` sections."""
        if isinstance(instruction, CTransform):
            raise TypeError("instruct() takes an instruction; a C spec goes to .context(...)")
        builder: Agent = self._edit()
        builder._instruction = instruction
        return builder

    def describe(self, description: str) -> Agent:
        return self._set("description", description)

    def global_instruct(self, instruction: Any) -> Agent:
        return self._set("global_instruction", instruction)

    def generate_content_config(self, config: Any) -> Agent:
        return self._set("generate_content_config", config)

    def planner(self, planner: Any) -> Agent:
        return self._set("planner", planner)

    def tool(self, fn: Any) -> Agent:
        """Adds a tool (a function, a tool object, a toolset, or a ``T`` chain's tools)."""
        builder: Agent = self._edit()
        builder._tools.extend(fn.tools if isinstance(fn, ToolChain) else [fn])
        return builder

    def tools(self, tools: Any) -> Agent:
        """Replaces the tools (a list, or a ``T`` chain)."""
        builder: Agent = self._edit()
        builder._tools = list(tools.tools if isinstance(tools, ToolChain) else
                              tools if isinstance(tools, list | tuple) else [tools])
        return builder

    def agent_tool(self, agent: Any) -> Agent:
        """Another agent as a tool: this one stays in charge."""
        return self.tool(AgentTool(agent=built(agent)))

    def sub_agent(self, agent: Any) -> Agent:
        builder: Agent = self._edit()
        builder._sub_agents.append(agent)
        return builder

    def sub_agents(self, agents: list[Any]) -> Agent:
        builder: Agent = self._edit()
        builder._sub_agents = list(agents)
        return builder

    def isolate(self) -> Agent:
        return self._set("disallow_transfer_to_parent", True)._set("disallow_transfer_to_peers", True)

    def stay(self) -> Agent:
        return self._set("disallow_transfer_to_parent", True)

    def no_peers(self) -> Agent:
        return self._set("disallow_transfer_to_peers", True)

    def memory(self, mode: Literal["preload", "on_demand", "both"] = "preload") -> Agent:
        if mode not in ("preload", "on_demand", "both"):
            raise ValueError(f"memory mode is 'preload', 'on_demand' or 'both', not {mode!r}")
        builder = self._set("preload_memory", True) if mode in ("preload", "both") else self._edit()
        return builder.tool(load_memory) if mode in ("on_demand", "both") else builder

    def writes(self, key: str | None) -> Agent:
        """The answer's text goes to ``state[key]`` (``output_key``)."""
        if key is not None and not key.isidentifier():
            raise ValueError(f"writes() needs an identifier, got {key!r} (try {key.replace('-', '_').replace(' ', '_')!r})")
        builder: Agent = self._edit()
        builder.writes_key = key
        return builder

    def reads(self, *keys: str, keep_history: bool = False) -> Agent:
        """These state keys in the instruction's ``<conversation_context>``; the
        history left out unless ``keep_history``."""
        spec = C.from_state(*keys) if keep_history else C.none() + C.from_state(*keys)
        builder: Agent = self._edit()
        builder._context = spec if builder._context is None else builder._context + spec
        builder.reads_keys = builder.reads_keys + keys
        return builder

    def context(self, spec: CTransform) -> Agent:
        """What the agent sees of the conversation (replaces an earlier spec)."""
        if isinstance(spec, PTransform):
            raise TypeError("context() takes a C spec; P sections go to .instruct(...)")
        builder: Agent = self._edit()
        builder._context = spec
        return builder

    def returns(self, schema: type[BaseModel]) -> Agent:
        """The answer is JSON of ``schema`` (``output_schema``)."""
        return self._set("output_schema", schema)

    output = returns

    def __matmul__(self, schema: Any) -> Agent:
        if not isinstance(schema, type):
            raise TypeError(f"agent @ X needs a type, got {schema!r}")
        builder: Agent = self._operand()._edit()
        return builder.returns(schema)

    def mock(self, responses: Any) -> Agent:
        """See :meth:`Builder.mock`: a list or a function of the request, for this agent."""
        if isinstance(responses, dict):
            return super().mock(responses)  # type: ignore[no-any-return]
        answers = None if callable(responses) else itertools.cycle(list(responses))

        def canned(callback_context: Any, llm_request: Any) -> LlmResponse:
            text = responses(llm_request) if answers is None else next(answers)
            return LlmResponse(content=Content.model(str(text)))

        builder: Agent = self._edit()
        builder._callbacks.setdefault("before_model", []).append(canned)
        return builder

    def produces(self, schema: type[BaseModel]) -> Agent:
        """A contract: this agent writes the fields of ``schema`` (checked at build)."""
        builder: Agent = self._edit()
        builder.produces_schema = _model_class(schema, "produces")
        return builder

    def consumes(self, schema: type[BaseModel]) -> Agent:
        """A contract: this agent needs the fields of ``schema`` upstream."""
        builder: Agent = self._edit()
        builder.consumes_schema = _model_class(schema, "consumes")
        return builder

    def __getattr__(self, name: str) -> Any:
        slot = name.removesuffix("_if")
        if slot in _CALLBACKS:
            def add(*args: Any) -> Agent:
                fns = args
                if name.endswith("_if"):  # before_model_if(condition, fn): added only when condition holds
                    fns = args[1:] if args and args[0] else ()
                builder: Agent = self._edit()
                builder._callbacks[slot] = [*builder._callbacks.get(slot, ()), *fns]  # a copy's list is its own
                return builder

            return add
        raise AttributeError(_unknown_setter(self, name))

    def guard(self, spec: GuardChain | Callable[..., Any]) -> Agent:
        """Checks on the model's request and answer: a ``G`` chain (see ``_guards``), or
        a plain function, added as an ``after_model`` callback (adk-fluent's rule)."""
        if not isinstance(spec, GuardChain):
            added: Agent = self.after_model(spec)
            return added
        before, after = spec.callbacks()
        builder: Agent = self
        if before is not None:
            builder = builder.before_model(before)
        if after is not None:
            builder = builder.after_model(after)
        return builder

    def outputs(self, key: str | None) -> Agent:
        """Deprecated in adk-fluent: :meth:`writes`."""
        warnings.warn(".outputs() is deprecated, use .writes() instead", DeprecationWarning, stacklevel=2)
        return self.writes(key)

    def delegate(self, agent: Any) -> Agent:
        """Deprecated in adk-fluent: :meth:`agent_tool`."""
        warnings.warn(".delegate() is deprecated, use .agent_tool() instead", DeprecationWarning, stacklevel=2)
        return self.agent_tool(agent)

    @property
    def model_name(self) -> str | None:
        model = self._config.get("model")
        return None if model is None else model if isinstance(model, str) else getattr(
            model, "model", None) or type(model).__name__

    @property
    def instruction_text(self) -> str | None:
        """The instruction as text ("" for none), or None when a function makes it."""
        if isinstance(self._instruction, PTransform):
            return self._instruction.render({})
        return self._instruction if isinstance(self._instruction, str) else None

    @property
    def tool_names(self) -> list[str]:
        return [str(getattr(tool, "name", None) or getattr(tool, "__name__", type(tool).__name__))
                for tool in self._tools]

    @property
    def callback_counts(self) -> dict[str, int]:
        return {slot: len(fns) for slot, fns in self._callbacks.items() if fns}

    def proceed_if(self, predicate: Callable[[Mapping[str, Any]], Any]) -> Agent:
        """Run this agent only when ``predicate(state)`` holds; else it is skipped (a
        ``before_agent`` callback answering an empty model content, as adk-fluent's).
        A predicate that raises fails the run: a typo is not a skip (adk-fluent 0.18)."""

        def skip_unless(callback_context: Any) -> Content | None:
            return None if predicate(callback_context.state) else Content(role="model", parts=())

        added: Agent = self.before_agent(skip_unless)
        return added

    def instruction_provider(self) -> Any:
        """The built agent's instruction (see :mod:`adk_actors.fluent`)."""
        instruction, spec = self._instruction, self._context
        render = spec.render if spec is not None else None
        if render is None:
            if isinstance(instruction, PTransform):
                return instruction.render({}) if not instruction.dynamic else (
                    lambda ctx: Verbatim(instruction.render(ctx.state)))
            return instruction

        def combined(ctx: CompileContext) -> str:
            if isinstance(instruction, PTransform):
                text = instruction.render(ctx.state)
            else:
                text = instruction(ctx) if callable(instruction) else instruction
                text = substitute_vars(str(text or ""), ctx.state, ctx.artifacts)
            context = render(ctx)
            if not context or not text:
                return Verbatim(context or text)
            return Verbatim(f"{text}\n\n<conversation_context>\n{context}\n</conversation_context>")

        return combined

    def _build(self) -> LlmAgent:
        config = {k: v for k, v in self._config.items() if v is not None}
        for slot, fns in self._callbacks.items():
            config[f"{slot}_callback"] = fns[0] if len(fns) == 1 else list(fns)
        if self._context is not None:
            config["include_contents"] = self._context.include_contents
        return LlmAgent(name=self.name, instruction=self.instruction_provider(), tools=list(self._tools),
                        sub_agents=[built(a) for a in self._sub_agents], output_key=self.writes_key, **config)


def _holds(items: list[Any], item: Any) -> bool:
    """Whether ``item`` itself (not an equal one) is in ``items``."""
    return any(existing is item for existing in items)


def _has_gate(node: Any) -> bool:
    return getattr(node, "kind", None) == "gate" or any(_has_gate(step) for step in getattr(node, "steps", ()))


def _model_class(schema: Any, what: str) -> type[BaseModel]:
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise TypeError(f"{what}() takes a pydantic model class, got {schema!r}")
    return schema


W = TypeVar("W", bound="_Workflow")


class _Workflow(Builder):
    """A builder of steps (Pipeline, FanOut, Loop, Fallback)."""

    joiner = ""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._steps: list[Any] = []

    @property
    def steps(self) -> list[Any]:
        return list(self._steps)

    def _add(self, step: Any) -> Any:
        workflow = self._edit()
        workflow._steps.append(step._operand() if isinstance(step, Builder) else step)
        workflow._middlewares.extend(m for m in getattr(step, "_middlewares", ()) if not _holds(workflow._middlewares, m))
        return workflow

    @classmethod
    def _joined(cls: type[W], left: Any, right: Any) -> W:
        """``left <op> right``: flat when ``left`` is already this kind of workflow."""
        joined: W
        if type(left) is cls:
            joined = left._operand()._edit()
            joined.name = f"{left.name}{cls.joiner}{step_name(right)}"
        else:
            joined = cls(f"{step_name(left)}{cls.joiner}{step_name(right)}")._add(left)
        return joined._add(right)  # type: ignore[no-any-return]


class Timed(Builder):
    """A step with a time limit (``builder.timeout(seconds)``)."""

    kind = "timeout"

    def __init__(self, name: str, step: Any, seconds: float) -> None:
        super().__init__(name)
        self._steps = [step]
        self.seconds = seconds

    @property
    def steps(self) -> list[Any]:
        return list(self._steps)

    def _build(self) -> TimeoutAgent:
        return TimeoutAgent(name=self.name, sub_agents=[built(self._steps[0])], seconds=self.seconds)


_timeouts = itertools.count(1)


class Pipeline(_Workflow):
    """Steps in sequence (a SequentialAgent)."""

    kind = "sequence"

    joiner = "_then_"

    def step(self, step: Any) -> Pipeline:
        return self._add(step)  # type: ignore[no-any-return]

    def _build(self) -> SequentialAgent:
        kind = GatedSequence if _has_gate(self) else SequentialAgent
        return kind(name=self.name, sub_agents=[built(s) for s in self._steps])


class FanOut(_Workflow):
    """Branches at once (a ParallelAgent)."""

    kind = "parallel"

    joiner = "_and_"

    def branch(self, step: Any) -> FanOut:
        return self._add(step)  # type: ignore[no-any-return]

    def _build(self) -> ParallelAgent:
        return ParallelAgent(name=self.name, sub_agents=[built(s) for s in self._steps])


class Loop(_Workflow):
    """Steps repeated (a LoopAgent), ``max_iterations`` times or until a predicate
    on the state holds (checked after each round)."""

    kind = "loop"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._max = 0
        self._until: Callable[[Mapping[str, Any]], Any] | None = None

    def step(self, step: Any) -> Loop:
        return self._add(step)  # type: ignore[no-any-return]

    def max_iterations(self, n: int) -> Loop:
        loop: Loop = self._edit()
        loop._max = n
        return loop

    def until(self, predicate: Callable[[Mapping[str, Any]], Any]) -> Loop:
        loop: Loop = self._edit()
        loop._until = predicate
        return loop

    def _build(self) -> LoopAgent:
        steps = [built(s) for s in self._steps]
        if self._until is not None:
            steps.append(UntilCheck(name="_until_check", predicate=self._until))
        return LoopAgent(name=self.name, max_iterations=self._max, sub_agents=steps)


class Fallback(_Workflow):
    """Attempts in order: the first that does not fail answers."""

    kind = "fallback"

    joiner = "_or_"

    def attempt(self, step: Any) -> Fallback:
        return self._add(step)  # type: ignore[no-any-return]

    def _build(self) -> FallbackAgent:
        return FallbackAgent(name=self.name, sub_agents=[built(s) for s in self._steps])
