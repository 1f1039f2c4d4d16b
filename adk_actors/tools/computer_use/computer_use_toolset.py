"""google-adk's ``ComputerUseToolset``: a :class:`BaseComputer` as the tools a Gemini
computer-use model calls.

Listing the tools (:meth:`ComputerUseToolset.get_tools`), once until closed:
``computer.initialize()`` (once), ``computer.screen_size()``, then a
:class:`ComputerUseTool` per public ``BaseComputer`` method (alphabetically; not
``screen_size``, ``environment``, ``close``, ``prepare`` nor ``type_text``, nor any the
user excluded), then the newer (Gemini 3) actions ``click``, ``move``, ``type``,
``scroll``, ``take_screenshot``, ``press_key``, ``hotkey``: each is the computer's own
method of that name when it has a fitting one, else a stand-in calling the older
method; the optional newer mouse and key actions (``double_click`` ... ``key_up``)
only when the computer implements them. ``wait`` takes seconds as a number (rounded
up, at least 0); ``navigate`` refuses a URL that is not public (see ``_guards``)
unless ``allow_private_network_access``, answering the error and the current URL.
Every action takes the computer's action lock and calls ``computer.prepare`` with the
call's context first.

Each model request (:meth:`ComputerUseToolset.process_llm_request`): the tools are
put in the request's ``tools_dict`` (none is declared as a function), then Gemini's
``computerUse`` tool is added to the request's Gemini tools (unless one is there
already) with the computer's environment and the excluded actions in the request's
model's vocabulary. For a Gemini model the request is then adapted as google-adk's
Gemini model class adapts it (here, since no model class of ours knows computer use):
the system instruction is dropped, and a ``wait_5_seconds`` tool (Gemini 2.x's
action, waiting 5 s through ``wait``) is added next to ``wait``. Where this differs:
google-adk's model class does that after the before-model callbacks, so those see the
instruction (and no ``wait_5_seconds``) there and not here, and an instruction a
callback adds is sent here.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import math
from collections.abc import Callable, Collection
from typing import Any, Literal, cast

from ..._model_names import gemini_check_disabled, is_gemini_model
from .._base import ToolContext
from .._classes import BaseToolset
from ._action_names import (
    EXCLUDED_METHODS,
    OPTIONAL_KEY_ACTIONS,
    OPTIONAL_MOUSE_ACTIONS,
    excluded_for_model,
    expand_exclusions,
)
from ._guards import action_lock, refusal
from .base_computer import BaseComputer, ComputerEnvironment, ComputerState
from .computer_use_tool import ComputerUseTool

__all__ = ["EXCLUDED_METHODS", "ComputerUseToolset"]

_log = logging.getLogger("adk_actors.tools.computer_use")

#: what the model reads when ``navigate`` is refused (google-adk's words: the model reacts to them)
_URL_REFUSED = ("navigate refused: url must be http(s) and must not target a private or link-local address.")
_ENVIRONMENTS = {member.name for member in ComputerEnvironment}


class ComputerUseToolset(BaseToolset):
    """The tools of one computer (see the module)."""

    def __init__(self, *, computer: BaseComputer, excluded_predefined_functions: list[str] | None = None,
                 allow_private_network_access: bool = False) -> None:
        """``computer``: the computer the actions drive. ``excluded_predefined_functions``:
        actions not offered, by older (``click_at``) or newer (``click``) name, each
        excluding its counterpart too. ``allow_private_network_access``: let
        ``navigate`` open hosts that are not public (localhost, an intranet)."""
        super().__init__()
        self._computer = computer
        self._excluded_predefined_functions = excluded_predefined_functions
        self._allow_private_network_access = allow_private_network_access
        self._initialized = False
        self._closed = False
        self._tools: list[ComputerUseTool] | None = None
        self._init_locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    def _init_lock(self) -> asyncio.Lock:
        """This toolset's lock for setting up and closing, one per event loop (those of
        closed loops are forgotten)."""
        loop = asyncio.get_running_loop()
        lock = self._init_locks.get(loop)
        if lock is None:
            for closed in [known for known in self._init_locks if known.is_closed()]:
                del self._init_locks[closed]
            lock = self._init_locks[loop] = asyncio.Lock()
        return lock

    def __getstate__(self) -> dict[str, Any]:
        """A copy (deep copy, pickle) starts unset-up: no tools, no locks."""
        state = dict(self.__dict__)
        state.update(_init_locks={}, _initialized=False, _closed=False, _tools=None, _cached=None)
        return state

    async def _ensure_initialized(self) -> None:
        if self._initialized:
            return
        async with self._init_lock():
            if not self._initialized:
                await self._computer.initialize()
                self._initialized, self._closed = True, False

    def _is_implemented_on_computer(self, method_name: str, required_params: tuple[str, ...] = (),
                                    optional_params: tuple[str, ...] = ()) -> bool:
        """Whether the computer's class has a coroutine method ``method_name`` that fits
        an action: it returns a ComputerState (or says nothing), takes
        ``required_params`` by keyword (or ``**kwargs``), and any other parameter it has
        is one of ``optional_params``, ``intent`` or ``tool_context`` with a default."""
        method = getattr(type(self._computer), method_name, None)
        if not inspect.iscoroutinefunction(method):
            return False
        try:
            signature = inspect.signature(method)
        except (TypeError, ValueError):
            return False
        returns = signature.return_annotation
        if returns is not inspect.Signature.empty and returns is not ComputerState and not (
                isinstance(returns, str) and returns.rsplit(".", 1)[-1] == "ComputerState"):
            return False
        params = [p for p in signature.parameters.values() if p.name != "self"]
        by_keyword = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        any_keyword = any(p.kind == p.VAR_KEYWORD for p in params)
        if not any_keyword and not set(required_params) <= by_keyword:
            return False
        optional = {*optional_params, "intent", "tool_context"}
        for param in params:
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name in required_params:
                continue
            if param.kind == param.POSITIONAL_ONLY or param.default is param.empty or param.name not in optional:
                return False
        return True

    def _unimplemented_modern_actions(self) -> list[str]:
        """The optional newer actions the computer does not implement."""
        return [*(name for name in OPTIONAL_MOUSE_ACTIONS if not self._is_implemented_on_computer(
                    name, required_params=("x", "y"), optional_params=("button",))),
                *(name for name in OPTIONAL_KEY_ACTIONS if not self._is_implemented_on_computer(
                    name, required_params=("key",)))]

    def _wrap_method_with_state_binding(self, method: Callable[..., Any], *,
                                        tool_name: str | None = None) -> Callable[..., Any]:
        """``method`` as an action named ``tool_name`` (else its own name): a coroutine
        function with ``method``'s parameters and a keyword-only ``tool_context`` that,
        when called, takes the computer's action lock, calls ``computer.prepare`` with
        the context (when there is one), then ``method`` (given the context only when
        it declares a ``tool_context`` parameter) and returns what it returns."""
        computer = self._computer
        try:
            signature = inspect.signature(method)
        except (TypeError, ValueError):
            signature = inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                                           inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
        context = signature.parameters.get("tool_context")
        forwards = context is not None and context.kind in (context.POSITIONAL_OR_KEYWORD, context.KEYWORD_ONLY)

        @functools.wraps(method)
        async def action(*args: Any, tool_context: ToolContext | None = None, **kwargs: Any) -> Any:
            async with action_lock(computer):
                if tool_context is not None:
                    await computer.prepare(tool_context)
                if forwards:
                    return await method(*args, tool_context=tool_context, **kwargs)
                return await method(*args, **kwargs)

        action.__name__ = action.__qualname__ = tool_name or method.__name__
        kept = [p for p in signature.parameters.values() if p.name != "tool_context" and p.kind != p.VAR_KEYWORD]
        rest = [p for p in signature.parameters.values() if p.kind == p.VAR_KEYWORD]
        context_param = inspect.Parameter("tool_context", inspect.Parameter.KEYWORD_ONLY, default=None,
                                          annotation=ToolContext)
        action.__signature__ = signature.replace(parameters=[*kept, context_param, *rest])  # type: ignore[attr-defined]
        return action

    def _wrap_navigate_with_url_validation(self, navigate_method: Callable[..., Any]) -> Callable[..., Any]:
        """``navigate`` that first checks the model's URL (see ``_guards.refusal``): a
        refused one is logged and answered ``{"error": ..., "url": <current URL>}``
        without navigating."""

        @functools.wraps(navigate_method)
        async def navigate(url: str, *args: Any, **kwargs: Any) -> Any:
            why = await refusal(url, private_allowed=self._allow_private_network_access)
            if why is not None:
                _log.warning("navigate refused (%s)", why)
                state: ComputerState = await self._computer.current_state()
                return {"error": _URL_REFUSED, "url": state.url}
            return await navigate_method(url, *args, **kwargs)

        return navigate

    def _newer_action(self, name: str, required: tuple[str, ...], optional: tuple[str, ...],
                      stand_in: Callable[..., Any]) -> Callable[..., Any]:
        """The computer's own ``name`` method when it fits (see
        :meth:`_is_implemented_on_computer`), else ``stand_in``; bound as an action."""
        if self._is_implemented_on_computer(name, required_params=required, optional_params=optional):
            return self._wrap_method_with_state_binding(getattr(self._computer, name), tool_name=name)
        return self._wrap_method_with_state_binding(stand_in, tool_name=name)

    def _build_modern_alias_methods(self, excluded_set: Collection[str]) -> list[Callable[..., Any]]:
        """The newer actions not in ``excluded_set`` (see the module)."""
        computer = self._computer

        async def click(x: int, y: int) -> ComputerState:
            """Click at pixel (x, y)."""
            return await computer.click_at(x, y)

        async def move(x: int, y: int) -> ComputerState:
            """Move the pointer to pixel (x, y)."""
            return await computer.hover_at(x, y)

        async def type_action(text: str, press_enter: bool = False) -> ComputerState:
            """Type text where the focus is."""
            return await computer.type_text(text=text, press_enter=press_enter)

        async def scroll(x: int, y: int, direction: Literal["up", "down", "left", "right"] = "down",
                         magnitude_in_pixels: int = 300) -> ComputerState:
            """Scroll what is at pixel (x, y)."""
            return await computer.scroll_at(x, y, direction, magnitude_in_pixels)

        async def take_screenshot() -> ComputerState:
            """The screen as it is now."""
            return await computer.current_state()

        async def press_key(key: str) -> ComputerState:
            """Press one key."""
            return await computer.key_combination([key])

        async def hotkey(keys: list[str]) -> ComputerState:
            """Press keys together."""
            return await computer.key_combination(keys)

        newer: list[tuple[str, tuple[str, ...], tuple[str, ...], Callable[..., Any]]] = [
            ("click", ("x", "y"), ("button",), click),
            ("move", ("x", "y"), (), move),
            ("type", ("text",), ("press_enter",), type_action),
            ("scroll", ("x", "y", "direction"), ("magnitude_in_pixels",), scroll),
            ("take_screenshot", (), (), take_screenshot),
            ("press_key", ("key",), (), press_key),
            ("hotkey", ("keys",), (), hotkey),
        ]
        actions = [self._newer_action(name, required, optional, stand_in)
                   for name, required, optional, stand_in in newer if name not in excluded_set]
        optional_ones = [*((name, ("x", "y"), ("button",)) for name in OPTIONAL_MOUSE_ACTIONS),
                         *((name, ("key",), ()) for name in OPTIONAL_KEY_ACTIONS)]
        for name, required, optional in optional_ones:
            if name not in excluded_set and self._is_implemented_on_computer(
                    name, required_params=required, optional_params=optional):
                actions.append(self._wrap_method_with_state_binding(getattr(computer, name), tool_name=name))
        return actions

    @staticmethod
    async def adapt_computer_use_tool(method_name: str, adapter_func: Callable[[Callable[..., Any]], Any],
                                      llm_request: Any) -> None:
        """Replace the request's tool for the BaseComputer method ``method_name``:
        ``adapter_func`` (sync or async) gets the tool's function and returns a new
        one, which becomes a ComputerUseTool with the old tool's screen sizes, in
        ``llm_request.tools_dict`` under the new function's name (the old entry removed
        when the name changed). A warning is logged and nothing changes when the name
        is not an action's method or the request has no such tool."""
        if method_name in EXCLUDED_METHODS or method_name == "type_text" or not callable(
                getattr(BaseComputer, method_name, None)):
            _log.warning("Method %s is not a valid BaseComputer method", method_name)
            return
        if method_name not in llm_request.tools_dict:
            _log.warning("Method %s not found in tools_dict", method_name)
            return
        original = cast(ComputerUseTool, llm_request.tools_dict[method_name])
        adapted = adapter_func(original.func)
        if inspect.isawaitable(adapted):
            adapted = await adapted
        llm_request.tools_dict[adapted.__name__] = ComputerUseTool(
            func=adapted, screen_size=original._screen_size, virtual_screen_size=original._coordinate_space)
        if adapted.__name__ != method_name:
            del llm_request.tools_dict[method_name]

    async def get_tools(self, readonly_context: Any = None) -> list[ComputerUseTool]:  # type: ignore[override]
        """The computer's tools (see the module), listed once and kept until
        :meth:`close`. What ``initialize`` or ``screen_size`` raises is raised."""
        if self._tools:
            return self._tools
        await self._ensure_initialized()
        async with self._init_lock():
            if self._tools:
                return self._tools
            screen_size = await self._computer.screen_size()
            excluded = expand_exclusions(self._excluded_predefined_functions or ())
            methods: list[Callable[..., Any]] = []
            for name in dir(BaseComputer):
                if name.startswith("_") or name in EXCLUDED_METHODS or name in ("session_state", "type_text") \
                        or name in excluded or not callable(getattr(BaseComputer, name, None)):
                    continue
                method = getattr(self._computer, name)
                if name == "navigate":
                    method = self._wrap_navigate_with_url_validation(method)
                elif name == "wait":
                    method = _wait_in_whole_seconds(method)
                methods.append(self._wrap_method_with_state_binding(method, tool_name=name))
            methods.extend(self._build_modern_alias_methods(excluded))
            self._tools = [ComputerUseTool(func=method, screen_size=screen_size) for method in methods]
            return self._tools

    async def close(self) -> None:
        """Close the computer (once until it is set up again) and forget the tools; the
        next listing sets the computer up again."""
        async with self._init_lock():
            if not self._closed:
                await self._computer.close()
                self._closed = True
            self._initialized = False
            self._tools = None
            self._cached = None
        await super().close()

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: Any) -> None:
        """Prepare ``llm_request`` for computer use (see the module), in order: tools
        listed if not yet, put in ``tools_dict``; Gemini's ``computerUse`` entry added
        unless the request has one; for a Gemini model, the instruction dropped and
        ``wait_5_seconds`` added. What listing the tools or the computer raises is
        logged and raised (the step ends with it)."""
        try:
            if not self._tools:
                await self.get_tools()
            for tool in self._tools or ():
                llm_request.tools_dict[tool.name] = tool
            if not any("computerUse" in entry for entry in llm_request.builtin_tools):
                environment = await self._computer.environment()
                name = getattr(environment, "name", None)
                entry: dict[str, Any] = {"environment": name if name in _ENVIRONMENTS else "ENVIRONMENT_BROWSER"}
                excluded = excluded_for_model(self._excluded_predefined_functions, llm_request.model,
                                              self._unimplemented_modern_actions())
                if excluded is not None:  # the key as google-genai sends it (Gemini reads both spellings)
                    entry["excluded_predefined_functions"] = excluded
                llm_request.builtin_tools.append({"computerUse": entry})
            if is_gemini_model(llm_request.model) or gemini_check_disabled():
                llm_request.system_instruction = ""
                await _add_wait_5_seconds(llm_request)
        except Exception as error:
            _log.error("ComputerUseToolset.process_llm_request failed: %s", error)
            raise


def _wait_in_whole_seconds(wait_method: Callable[..., Any]) -> Callable[..., Any]:
    """The ``wait`` action: any number of seconds (default 1), passed to the computer's
    ``wait`` rounded up and at least 0."""

    async def wait(seconds: float = 1) -> ComputerState:
        """Wait for some seconds."""
        return cast(ComputerState, await wait_method(max(0, math.ceil(seconds))))

    return wait


async def _add_wait_5_seconds(llm_request: Any) -> None:
    """Gemini 2.x's ``wait_5_seconds`` action as a tool calling the request's ``wait``
    tool with 5 seconds; ``wait`` itself is kept. Nothing when there is no ``wait``."""
    wait_tool = llm_request.tools_dict.get("wait")

    def five_seconds(wait_func: Callable[..., Any]) -> Callable[..., Any]:
        async def wait_5_seconds(tool_context: Any = None) -> Any:
            return await wait_func(5, tool_context=tool_context)

        return wait_5_seconds

    await ComputerUseToolset.adapt_computer_use_tool("wait", five_seconds, llm_request)
    if wait_tool is not None and "wait_5_seconds" in llm_request.tools_dict:
        llm_request.tools_dict["wait"] = wait_tool
