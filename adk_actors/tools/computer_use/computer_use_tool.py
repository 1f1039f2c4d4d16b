"""google-adk's ``ComputerUseTool``: one computer action as a function tool.

The model gives coordinates on a virtual grid (1000 x 1000 unless told otherwise);
the tool scales them to the real screen before the action runs, and turns the
:class:`ComputerState` the action returns into the function response google-adk
sends: ``{"url": ...}`` with the screenshot as an image part of the response (the
image is returned as a media part, which the engine moves into the function
response's ``parts``, as google-adk's flow does with the screenshot it decodes).
Where this differs: an after-tool callback sees the screenshot as that part, where
google-adk's sees ``{"mimetype": "image/png", "data": <base64>}`` (google-adk decodes
it after the callbacks; the engine here only takes media parts out of results).

The tool is never declared to the model as a function: the model knows the actions
from Gemini's ``computer_use`` tool, which :class:`ComputerUseToolset` adds to the
request; the tool only answers the calls the model makes.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from ..._types import Blob, FunctionDeclaration, Part
from .._base import ToolContext
from .._function import FunctionTool
from .base_computer import ComputerState

__all__ = ["ComputerUseTool"]

_log = logging.getLogger("adk_actors.tools.computer_use")

#: the arguments scaled by the screen's width, and those scaled by its height: the
#: older actions' names (x/y, destination_x/destination_y) and Gemini 3's (start_*, end_*)
_WIDTH_ARGS = ("x", "destination_x", "start_x", "end_x")
_HEIGHT_ARGS = ("y", "destination_y", "start_y", "end_y")
#: Gemini 3's drag names and the older ones a computer without them takes instead
_OLDER_NAMES = (("start_x", "x"), ("start_y", "y"), ("end_x", "destination_x"), ("end_y", "destination_y"))

# the words the model and the user read (google-adk's, kept: the model reacts to them)
_NEEDS_CONFIRMATION = "This tool call requires confirmation, please approve or reject."
_REJECTED = "This tool call is rejected."
_DEFAULT_HINT = "This computer use action requires safety confirmation."


def _checked_size(size: Any, what: str) -> tuple[int, int]:
    """``size`` when it is a (width, height) tuple of two positive numbers; else a
    ValueError naming ``what``."""
    if not isinstance(size, tuple) or len(size) != 2:
        raise ValueError(f"{what} must be a tuple of (width, height)")
    if size[0] <= 0 or size[1] <= 0:
        raise ValueError(f"{what} dimensions must be positive")
    return size


class ComputerUseTool(FunctionTool):
    """A computer action (a coroutine function returning a :class:`ComputerState`) as
    a tool whose coordinates are scaled from the model's virtual grid to the screen."""

    def __init__(self, *, func: Callable[..., Any], screen_size: tuple[int, int],
                 virtual_screen_size: tuple[int, int] = (1000, 1000)) -> None:
        """Describe ``func`` as a FunctionTool does, then keep ``screen_size`` (the real
        screen's width and height in pixels) and ``virtual_screen_size`` (the grid the
        model's coordinates are on). A ValueError when either is not a tuple of two
        positive numbers."""
        super().__init__(func)
        self._screen_size = _checked_size(screen_size, "screen_size")
        self._coordinate_space = _checked_size(virtual_screen_size, "virtual_screen_size")

    def declaration(self) -> FunctionDeclaration | None:
        """Nothing: the model is told of computer actions by Gemini's ``computer_use``
        tool (see :class:`ComputerUseToolset`), not by function declarations.
        ``_get_declaration()`` still gives the function's declaration, as google-adk's."""
        return None

    def _scaled(self, value: Any, axis: int, name: str) -> int:
        """``value`` on the virtual grid as a screen pixel along ``axis`` (0: x, 1: y),
        rounded down and kept on the screen. A ValueError for a value not a number."""
        if not isinstance(value, (int, float)):
            raise ValueError(f"{name} coordinate must be numeric, got {type(value)}")
        pixel = int(value / self._coordinate_space[axis] * self._screen_size[axis])
        return max(0, min(pixel, self._screen_size[axis] - 1))

    def _normalize_x(self, x: int) -> int:
        """``x`` on the virtual grid as a pixel column of the screen (see :meth:`_scaled`)."""
        return self._scaled(x, 0, "x")

    def _normalize_y(self, y: int) -> int:
        """``y`` on the virtual grid as a pixel row of the screen (see :meth:`_scaled`)."""
        return self._scaled(y, 1, "y")

    def _takes(self, name: str) -> bool:
        try:
            return name in inspect.signature(self.func).parameters
        except (TypeError, ValueError):
            return False

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Run the action for the model's ``args``, in order:

        1. Safety: on a first run, a ``safety_decision`` argument whose ``decision`` is
           ``require_confirmation`` asks the user to confirm (its ``explanation`` as the
           hint), ends the turn without a summary and returns an error saying the call
           waits for approval; when the user rejected the call, an error saying so is
           returned. Either way the action does not run.
        2. The coordinates in ``args`` (x, y, destination_*, start_*, end_*) are scaled
           to the screen, in place; Gemini 3's start_*/end_* become x/y and
           destination_* for a function that does not take them.
        3. The action runs as a FunctionTool call (bad arguments raise
           ``ToolArgumentError``); a :class:`ComputerState` it returns becomes
           ``{"image": <the screenshot as a PNG part>, "url": ...}``; a screenshot that
           is not bytes is a TypeError.
        4. After a confirmed call the response says so (``safety_acknowledgement``; a
           result that is not a dict goes under ``result`` first).

        What the action raises is logged and raised again."""
        confirmation = tool_context.tool_confirmation
        if confirmation is None:
            decision = args.get("safety_decision")
            if decision and decision.get("decision") == "require_confirmation":
                tool_context.request_confirmation(hint=decision.get("explanation") or _DEFAULT_HINT)
                tool_context.actions.skip_summarization = True
                return {"error": _NEEDS_CONFIRMATION}
        elif not confirmation.confirmed:
            return {"error": _REJECTED}
        try:
            for names, axis in ((_WIDTH_ARGS, 0), (_HEIGHT_ARGS, 1)):
                for name in names:
                    if name in args:
                        given = args[name]
                        args[name] = self._scaled(given, axis, name.rsplit("_", 1)[-1])
                        _log.debug("scaled %s from %s to %s", name, given, args[name])
            if not self._takes("start_x"):
                for newer, older in _OLDER_NAMES:
                    if newer in args and older not in args:
                        args[older] = args.pop(newer)
            result = await super().run_async(args=args, tool_context=tool_context)
            response: Any = result
            if isinstance(result, ComputerState):
                if not isinstance(result.screenshot, bytes):
                    raise TypeError(f"a ComputerState's screenshot must be PNG bytes, not "
                                    f"{type(result.screenshot).__name__}")
                response = {"image": Part(inline_data=Blob(mime_type="image/png", data=result.screenshot)),
                            "url": result.url}
            if confirmation is not None and confirmation.confirmed:
                if not isinstance(response, dict):
                    response = {"result": response}
                response["safety_acknowledgement"] = "true"
            return response
        except Exception as error:
            _log.error("computer use action %s failed: %s", self.name, error)
            raise
