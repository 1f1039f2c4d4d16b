"""Run a google-adk agent file (tests/adk_style) on google-adk and on adk-actors, on
the same scripted model, and reduce each run to what a user would compare.

* :func:`source_for` rewrites a file's imports only: ``google.adk`` -> ``adk_actors``,
  and (``genai=False``) ``from google.genai import types`` -> ``from adk_actors import
  types``. Nothing else of the file changes.
* :class:`Replies` is the scripted model's side of the conversation: the file's
  ``REPLIES`` in order, shared by every agent of the tree, its position kept in a file
  so that a host's run workers (other processes) take up where the last one stopped.
* A reply may also report what the model was sent, the same way on both sides:
  ``{"echo": "instruction", "has": "X"}`` says whether the system instruction holds
  X, ``{"echo": "config", "key": "temperature"}`` gives a setting, ``{"echo":
  "last"}`` the text of the last content (so callbacks that change the request in
  place are compared by what reached the model).
* :func:`drive` sends the file's ``TURNS`` through google-adk's runner interface
  (``InMemoryRunner``, ``session_service``, ``run_async``), which both frameworks have.
* :func:`rows` reduces events to (kind, author, what): tool calls with their args,
  tool responses, final texts, escalations and transfers; ids and times left out.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ADK_STYLE = Path(__file__).resolve().parent / "adk_style"
FILES = sorted(p.stem for p in ADK_STYLE.glob("*.py"))


def source_for(name: str, *, ours: bool, genai: bool) -> str:
    """The agent file's text, its imports rewritten for adk-actors when ``ours``."""
    text = (ADK_STYLE / f"{name}.py").read_text()
    if not ours:
        return text
    text = re.sub(r"\bgoogle\.adk\b", "adk_actors", text)
    if not genai:
        text = text.replace("from google.genai import types", "from adk_actors import types")
    return text


def load(name: str, folder: Path, *, ours: bool, genai: bool) -> ModuleType:
    """Import the (rewritten) agent file from ``folder`` under a module name of its own."""
    module_name = f"adk_style_{name}_{'ours' if ours else 'google'}{'_genai' if ours and genai else ''}"
    path = folder / f"{module_name}.py"
    path.write_text(source_for(name, ours=ours, genai=genai))
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


class Replies:
    """The next reply of the script, for whichever agent asks (see the module)."""

    def __init__(self, replies: list[Any], cursor: Path) -> None:
        self.replies = replies
        self.cursor = str(cursor)

    def next(self) -> Any:
        fd = os.open(self.cursor, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            taken = int(os.read(fd, 32) or b"0")
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, str(taken + 1).encode())
        finally:
            os.close(fd)
        return self.replies[taken] if taken < len(self.replies) else "(the script has run out)"


def _items(reply: Any) -> list[Any]:
    return reply if isinstance(reply, list) else [reply]


def _texts(content: Any) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    return "\n".join(p.text for p in content.parts or [] if p.text)


def _echo(item: dict[str, Any], instruction: str, setting: Any, contents: list[Any]) -> str:
    """The text an ``echo`` reply gives (see the module)."""
    if item["echo"] == "instruction":
        return f"instruction has {item['has']}: {'yes' if item['has'] in instruction else 'no'}"
    if item["echo"] == "config":
        return f"{item['key']}: {setting(item['key'])}"
    return f"last: {_texts(contents[-1]) if contents else ''}"


def our_model(replies: Replies) -> Any:
    """A ScriptedModel answering from ``replies``."""
    from adk_actors import Content, Part
    from adk_actors.models import ScriptedModel, call

    def answer(request: Any) -> Any:
        items = [item if isinstance(item, str)
                 else _echo(item, request.system_instruction, request.config.get, request.contents) if "echo" in item
                 else call(item["call"], **item["args"])
                 for item in _items(replies.next())]
        if len(items) == 1 and isinstance(items[0], str):
            return items[0]
        if all(isinstance(item, str) for item in items):
            return Content(role="model", parts=tuple(Part(text=item) for item in items))
        return items

    return ScriptedModel(fallback=answer)


def google_model(replies: Replies) -> Any:
    """A google-adk BaseLlm answering from ``replies``."""
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    class Scripted(BaseLlm):  # type: ignore[misc]
        model: str = "scripted"

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            config = llm_request.config
            instruction = _texts(config.system_instruction)
            parts = [types.Part(text=item) if isinstance(item, str)
                     else types.Part(text=_echo(item, instruction, lambda key: getattr(config, key),
                                                llm_request.contents)) if "echo" in item
                     else types.Part(function_call=types.FunctionCall(name=item["call"], args=item["args"]))
                     for item in _items(replies.next())]
            yield LlmResponse(content=types.Content(role="model", parts=parts))

    return Scripted()


def give_model(agent: Any, model: Any) -> None:
    """Put ``model`` in every agent of the tree that has a model field (an LlmAgent,
    an AgentTool's agent included)."""
    if "model" in type(agent).model_fields:
        agent.model = model
    for tool in getattr(agent, "tools", None) or []:
        if getattr(tool, "agent", None) is not None:
            give_model(tool.agent, model)
    for child in agent.sub_agents:
        give_model(child, model)


async def drive(runners: ModuleType, types: Any, root: Any, turns: list[str]) -> tuple[list[Any], dict[str, Any]]:
    """Every event of the turns, and the session's state after them, through the
    framework's own ``InMemoryRunner`` (``runners`` is google.adk.runners or ours)."""
    runner = runners.InMemoryRunner(agent=root, app_name="side_by_side")
    session = await runner.session_service.create_session(app_name="side_by_side", user_id="ann")
    events: list[Any] = []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            events.append(event)
    stored = await runner.session_service.get_session(app_name="side_by_side", user_id="ann", session_id=session.id)
    return events, dict(stored.state)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def rows(events: list[Any]) -> list[tuple[Any, ...]]:
    """What a user compares of a run (see the module); the user's own events left out."""
    found: list[tuple[Any, ...]] = []
    for event in events:
        if event.author == "user" or event.partial:
            continue
        for part in (event.content.parts or []) if event.content is not None else []:
            if part.function_call is not None:
                found.append(("call", event.author, part.function_call.name, _plain(part.function_call.args or {})))
            elif part.function_response is not None:
                found.append(("response", event.author, part.function_response.name,
                              _plain(part.function_response.response)))
            elif part.text and not part.thought:
                found.append(("text", event.author, part.text))
        if event.actions.escalate:
            found.append(("escalate", event.author))
        if event.actions.transfer_to_agent:
            found.append(("transfer", event.author, event.actions.transfer_to_agent))
    return found


def final_text(found: list[tuple[Any, ...]]) -> str | None:
    texts = [row[2] for row in found if row[0] == "text"]
    return texts[-1] if texts else None
