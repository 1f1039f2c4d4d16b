"""Computer use (google-adk's ``google.adk.tools.computer_use``): a model drives a
browser through a :class:`BaseComputer` the user implements (with Playwright, say),
offered to the model by a :class:`ComputerUseToolset`.

A google-adk computer-use agent moves over with its imports changed from
``google.adk.tools.computer_use`` to ``adk_actors.tools.computer_use``.
"""

from .base_computer import BaseComputer, ComputerEnvironment, ComputerState
from .computer_use_tool import ComputerUseTool
from .computer_use_toolset import ComputerUseToolset

__all__ = ["BaseComputer", "ComputerEnvironment", "ComputerState", "ComputerUseTool", "ComputerUseToolset"]
