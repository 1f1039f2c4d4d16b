"""google-adk's computer interface for computer use: what a user subclasses to drive a
browser (Playwright, a remote sandbox ...) with a model.

:class:`BaseComputer` lists the actions a computer-use model may ask for; each one
acts and then returns a :class:`ComputerState` (a PNG screenshot and the page's URL),
which :class:`~adk_actors.tools.computer_use.computer_use_tool.ComputerUseTool` turns
into the function response the model sees (the screenshot as an image part).
Coordinates reach these methods already in screen pixels: the tool scales the
model's 0-999 grid to :meth:`BaseComputer.screen_size` first.
"""

from __future__ import annotations

import abc
from enum import Enum
from typing import TYPE_CHECKING, Literal

import pydantic

if TYPE_CHECKING:
    from .._base import ToolContext

__all__ = ["BaseComputer", "ComputerEnvironment", "ComputerState"]


class ComputerEnvironment(str, Enum):  # noqa: UP042 (google-adk's kind: str() names the member)
    """Where the computer's actions happen (google-adk's members; the model is told the
    Gemini environment of the same name)."""

    ENVIRONMENT_UNSPECIFIED = "ENVIRONMENT_UNSPECIFIED"
    """No environment named: the model is told it is a browser."""
    ENVIRONMENT_BROWSER = "ENVIRONMENT_BROWSER"
    """A web browser."""


class ComputerState(pydantic.BaseModel):
    """What the computer shows after an action.

    Attributes:
      screenshot: the screen as PNG bytes.
      url: the address of the page shown, when there is one.
    """

    # google-adk's field: bytes, None until set (so not validated as None)
    screenshot: bytes = pydantic.Field(default=None, description="The screen as a PNG image")  # type: ignore[assignment]
    url: str | None = pydantic.Field(default=None, description="The address of the page shown")


class BaseComputer(abc.ABC):
    """A computer a model controls through :class:`ComputerUseToolset`.

    A subclass implements every abstract action; each acts, then returns the
    :class:`ComputerState` seen afterwards. ``x`` and ``y`` arguments are screen
    pixels. The toolset calls :meth:`initialize` once before listing its tools,
    :meth:`prepare` before every action, and :meth:`close` when it is closed.
    """

    async def prepare(self, tool_context: ToolContext) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Called with the call's context before every action, so a computer can bind
        per-session resources (kept in ``tool_context.state``). Does nothing by default."""

    @abc.abstractmethod
    async def screen_size(self) -> tuple[int, int]:
        """The screen's (width, height) in pixels."""

    @abc.abstractmethod
    async def open_web_browser(self) -> ComputerState:
        """Open the web browser; the state afterwards."""

    @abc.abstractmethod
    async def click_at(self, x: int, y: int) -> ComputerState:
        """Click at pixel (x, y) of the screen; the state afterwards.

        Args:
          x: horizontal position in pixels.
          y: vertical position in pixels.
        """

    @abc.abstractmethod
    async def hover_at(self, x: int, y: int) -> ComputerState:
        """Move the pointer over pixel (x, y) (menus that open on hover show); the
        state afterwards.

        Args:
          x: horizontal position in pixels.
          y: vertical position in pixels.
        """

    @abc.abstractmethod
    async def type_text_at(
        self,
        x: int,
        y: int,
        text: str,
        press_enter: bool = True,
        clear_before_typing: bool = True,
    ) -> ComputerState:
        """Click at pixel (x, y), empty the field there unless ``clear_before_typing``
        is False, type ``text``, then press Enter unless ``press_enter`` is False; the
        state afterwards.

        Args:
          x: horizontal position in pixels.
          y: vertical position in pixels.
          text: what to type.
          press_enter: press Enter after typing.
          clear_before_typing: empty the field before typing.
        """

    async def type_text(self, text: str, press_enter: bool = False) -> ComputerState:
        """Type ``text`` where the focus is, then Enter when ``press_enter``.

        By default each character is sent through :meth:`key_combination` on its own
        (then ``"Enter"`` when asked), so every character costs a round trip and a
        screenshot: a subclass with a bulk text input should override this. Returns
        the state after the last key, or :meth:`current_state` when nothing was typed.

        Args:
          text: what to type.
          press_enter: press Enter after typing.
        """
        state: ComputerState | None = None
        for character in text:
            state = await self.key_combination([character])
        if press_enter:
            state = await self.key_combination(["Enter"])
        return state if state is not None else await self.current_state()

    @abc.abstractmethod
    async def scroll_document(self, direction: Literal["up", "down", "left", "right"]) -> ComputerState:
        """Scroll the whole page in ``direction``; the state afterwards.

        Args:
          direction: "up", "down", "left" or "right".
        """

    @abc.abstractmethod
    async def scroll_at(
        self,
        x: int,
        y: int,
        direction: Literal["up", "down", "left", "right"],
        magnitude: int,
    ) -> ComputerState:
        """Scroll what is at pixel (x, y) by ``magnitude`` pixels in ``direction``; the
        state afterwards.

        Args:
          x: horizontal position in pixels.
          y: vertical position in pixels.
          direction: "up", "down", "left" or "right".
          magnitude: how far to scroll.
        """

    @abc.abstractmethod
    async def wait(self, seconds: int) -> ComputerState:
        """Let the page work for ``seconds`` seconds; the state afterwards.

        Args:
          seconds: how long to wait.
        """

    @abc.abstractmethod
    async def go_back(self) -> ComputerState:
        """Go to the previous page of the browser's history; the state afterwards."""

    @abc.abstractmethod
    async def go_forward(self) -> ComputerState:
        """Go to the next page of the browser's history; the state afterwards."""

    @abc.abstractmethod
    async def search(self) -> ComputerState:
        """Open a search engine's start page (to begin a search, or when the current
        site does not have what is needed); the state afterwards."""

    @abc.abstractmethod
    async def navigate(self, url: str) -> ComputerState:
        """Open ``url``; the state afterwards.

        Args:
          url: the address to open.
        """

    @abc.abstractmethod
    async def key_combination(self, keys: list[str]) -> ComputerState:
        """Press ``keys`` together (``["Control", "c"]``, ``["Enter"]``); the state
        afterwards.

        Args:
          keys: the keys to hold down together.
        """

    @abc.abstractmethod
    async def drag_and_drop(self, x: int, y: int, destination_x: int, destination_y: int) -> ComputerState:
        """Drag what is at pixel (x, y) to pixel (destination_x, destination_y); the
        state afterwards.

        Args:
          x: horizontal start in pixels.
          y: vertical start in pixels.
          destination_x: horizontal end in pixels.
          destination_y: vertical end in pixels.
        """

    @abc.abstractmethod
    async def current_state(self) -> ComputerState:
        """The state now, without acting."""

    async def initialize(self) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Set the computer up (the toolset calls it once, before listing its tools).
        Does nothing by default."""

    async def close(self) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Release what the computer holds (the toolset's ``close`` calls it). Does
        nothing by default."""

    @abc.abstractmethod
    async def environment(self) -> ComputerEnvironment:
        """Where the actions happen (the model is told)."""
