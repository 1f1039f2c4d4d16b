"""The skill tools a ``SkillToolset`` offers, but ``run_skill_script``
(``_skill_script``): ``list_skills``, ``search_skills``, ``load_skill``,
``unload_skill`` and ``load_skill_resource``.

Their names, parameters, response keys and ``error_code`` values are google-adk
2.13's, so a model (or a test) sees the same shapes; the descriptions and error texts
are our own words. A failure is a response ``{"error": <text>, "error_code": <code>}``,
never an exception.
"""

from __future__ import annotations

import logging
import mimetypes
from typing import TYPE_CHECKING, Any

from .._types import Blob, Content, FunctionDeclaration, LlmRequest, Part
from ..skills import _instruction as names
from ..skills import models, prompt
from ..utils.instructions_utils import inject_session_state
from ._base import ToolContext
from ._classes import BaseTool

if TYPE_CHECKING:
    from .skill_toolset import SkillToolset

__all__ = [
    "BINARY_FILE_STATUS",
    "ListSkillsTool",
    "LoadSkillResourceTool",
    "LoadSkillTool",
    "SearchSkillsTool",
    "SkillToolBase",
    "UnloadSkillTool",
    "count_failure",
    "error",
    "fetch_or_error",
    "missing",
    "object_schema",
    "resource_of",
    "string_schema",
]

_log = logging.getLogger("adk_actors.tools")

#: ``load_skill_resource``'s ``status`` for a binary file, whose bytes the next request carries
BINARY_FILE_STATUS = ("The file is binary: its content is attached to the conversation in the next"
                      " message for you to read.")
_EPHEMERAL_NOTICE = ("This skill is released when the current turn ends: use it now, and load it again"
                     " in a later turn if you need it then.")
_FOLDERS = ("references/", "assets/", "scripts/")


def error(text: str, code: str) -> dict[str, Any]:
    """A tool's failure as google-adk shapes it."""
    return {"error": text, "error_code": code}


def missing(args: dict[str, Any], *required: str) -> dict[str, Any] | None:
    """``INVALID_ARGUMENTS`` naming each of ``required`` that is absent or empty, one
    line each, or None when all are given."""
    lines = [f"The argument '{name}' is required." for name in required if not args.get(name)]
    return error("\n".join(lines), "INVALID_ARGUMENTS") if lines else None


def object_schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def string_schema(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


async def fetch_or_error(toolset: SkillToolset, skill_name: str,
                         invocation_id: str) -> tuple[models.Skill | None, dict[str, Any] | None]:
    """The skill (held, or fetched from the registry), or the response saying why not:
    ``REGISTRY_ERROR`` when the registry raised, ``SKILL_NOT_FOUND`` when there is none."""
    try:
        skill = await toolset._get_or_fetch_skill(skill_name, invocation_id)
    except Exception as exc:
        return None, error(f"The registry could not give the skill '{skill_name}': {exc}", "REGISTRY_ERROR")
    if skill is None:
        return None, error(f"There is no skill named '{skill_name}'.", "SKILL_NOT_FOUND")
    return skill, None


def _error_code(response: Any) -> str | None:
    if isinstance(response, dict) and response.get("error"):
        return str(response.get("error_code") or "TOOL_ERROR")
    return None


class SkillToolBase(BaseTool):
    """A tool of ``toolset``, named as its ``TOOL_NAME``."""

    TOOL_NAME = ""

    def __init__(self, toolset: SkillToolset, description: str) -> None:
        super().__init__(name=self.TOOL_NAME, description=description)
        self._toolset = toolset

    def _declare(self, parameters: dict[str, Any]) -> FunctionDeclaration:
        return FunctionDeclaration(name=self.name, description=self.description, parameters_json_schema=parameters)

    def _detect_error_in_response(self, response: Any) -> str | None:
        """google-adk's telemetry hook: the response's ``error_code`` when it failed."""
        return _error_code(response)


class ListSkillsTool(SkillToolBase):
    """``list_skills``: the toolset's local skills as an ``<available_skills>`` block."""

    TOOL_NAME = names.LIST_SKILLS

    def __init__(self, toolset: SkillToolset) -> None:
        super().__init__(toolset, "Lists the skills you can load, each with its name and what it is for.")

    def _get_declaration(self) -> FunctionDeclaration:
        return self._declare(object_schema({}))

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        return prompt.format_skills_as_xml(list(self._toolset._list_skills()))


class SearchSkillsTool(SkillToolBase):
    """``search_skills(query)``: the registry's matches, as frontmatter dicts, less any
    that a local skill's name shadows. Made without a registry it raises ``ValueError``."""

    TOOL_NAME = names.SEARCH_SKILLS

    def __init__(self, toolset: SkillToolset) -> None:
        registry = toolset._registry
        if registry is None:
            raise ValueError("SearchSkillsTool needs a SkillToolset with a skill registry.")
        super().__init__(toolset, registry.search_tool_description()
                         or "Finds more skills in the skill registry by keywords or by meaning.")

    def _get_declaration(self) -> FunctionDeclaration:
        return self._declare(object_schema({"query": string_schema("What to look for, as keywords or a phrase.")}, ["query"]))

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """In order: a missing ``query`` is ``INVALID_ARGUMENTS``; the registry is
        searched (what it raises is ``REGISTRY_ERROR``); each match whose name a local
        skill has is left out with a warning; the rest are returned as dicts."""
        query = args.get("query")
        if not query:
            return error("The argument 'query' is required.", "INVALID_ARGUMENTS")
        registry = self._toolset._registry
        assert registry is not None
        try:
            found = await registry.search_skills(query=query)
        except Exception as exc:
            return error(f"The skill registry search failed: {exc}", "REGISTRY_ERROR")
        kept = []
        for frontmatter in found:
            if frontmatter.name in self._toolset._skills:
                _log.warning("registry skill %r left out: a local skill has that name", frontmatter.name)
                continue
            kept.append(frontmatter.model_dump())
        return kept


class LoadSkillTool(SkillToolBase):
    """``load_skill(skill_name)``: activates a skill for the calling agent and returns
    ``skill_name``, ``instructions`` and ``frontmatter`` (plus ``unloaded_skills`` when
    the activation released others, and ``lifecycle_notice`` for an ephemeral skill)."""

    TOOL_NAME = names.LOAD_SKILL

    def __init__(self, toolset: SkillToolset) -> None:
        super().__init__(toolset, "Loads a skill and returns the instructions of its SKILL.md.")

    def _get_declaration(self) -> FunctionDeclaration:
        return self._declare(object_schema({"skill_name": string_schema("Name of the skill to load.")}, ["skill_name"]))

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """In order: a missing ``skill_name`` is ``INVALID_ARGUMENTS``; the skill is
        fetched (:func:`fetch_or_error`); its activation is recorded in state (which may
        release others); with ``adk_inject_state`` its instructions are filled from the
        session state (a required key that is missing raises, as google-adk's does)."""
        invalid = missing(args, "skill_name")
        if invalid is not None:
            return invalid
        skill_name: str = args["skill_name"]
        skill, failed = await fetch_or_error(self._toolset, skill_name, tool_context.invocation_id)
        if skill is None:
            return failed
        released = self._toolset._record_activation(tool_context.state, tool_context.agent_name, skill_name,
                                                     tool_context.invocation_id, skill)
        instructions = skill.instructions
        if skill.frontmatter.metadata.get("adk_inject_state"):
            instructions = str(await inject_session_state(instructions, tool_context))
        result: dict[str, Any] = {"skill_name": skill_name, "instructions": instructions,
                                  "frontmatter": skill.frontmatter.model_dump()}
        if released:
            result["unloaded_skills"] = released
        if self._toolset._is_ephemeral(skill_name):
            result["lifecycle_notice"] = _EPHEMERAL_NOTICE
        return result


class UnloadSkillTool(SkillToolBase):
    """``unload_skill(skill_name)`` (with ``ADK_ENABLE_SKILL_LIFECYCLE`` on): drops an
    active skill, so the tools it added are no longer declared and later requests
    carry a notice in place of its instructions. Answers ``{"skill_name", "unloaded":
    True, "active_skills"}``, or ``INVALID_ARGUMENTS`` / ``SKILL_NOT_ACTIVE``. Two
    unloads in one batch of calls race on the state key (the last write wins), as in
    google-adk."""

    TOOL_NAME = names.UNLOAD_SKILL

    def __init__(self, toolset: SkillToolset) -> None:
        super().__init__(toolset, "Unloads an active skill once its work is done, removing the tools it added.")

    def _get_declaration(self) -> FunctionDeclaration:
        return self._declare(object_schema({"skill_name": string_schema("Name of the skill to unload.")}, ["skill_name"]))

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        invalid = missing(args, "skill_name")
        if invalid is not None:
            return invalid
        skill_name: str = args["skill_name"]
        if not self._toolset.unload_skill(tool_context, skill_name):
            return error(f"The skill '{skill_name}' is not loaded.", "SKILL_NOT_ACTIVE")
        return {"skill_name": skill_name, "unloaded": True,
                "active_skills": self._toolset.list_active_skills(tool_context)}


def resource_of(skill: models.Skill, file_path: str) -> str | bytes | None:
    """The content of ``file_path`` (``references/…``, ``assets/…`` or ``scripts/…``)
    in ``skill``, or None when it has no such file."""
    folder, _, rest = file_path.partition("/")
    if folder == "references":
        return skill.resources.get_reference(rest)
    if folder == "assets":
        return skill.resources.get_asset(rest)
    script = skill.resources.get_script(rest)
    return script.src if script is not None else None


def count_failure(tool_context: ToolContext, kind: str) -> int:
    """The number of failed ``kind`` lookups so far in this invocation, this one
    counted (kept under a ``temp:`` state key, as google-adk keeps it)."""
    key = f"temp:_adk_skill_{kind}_not_found_count_{tool_context.invocation_id}"
    count = int(tool_context.state.get(key) or 0) + 1
    tool_context.state[key] = count
    return count


class LoadSkillResourceTool(SkillToolBase):
    """``load_skill_resource(skill_name, file_path)``: one file of a skill. A text file
    answers ``{"skill_name", "file_path", "content"}``; a binary one answers with a
    ``status`` saying so, and its bytes go into the next request
    (:meth:`process_llm_request`). Failures: ``INVALID_ARGUMENTS``,
    ``REGISTRY_ERROR``, ``SKILL_NOT_FOUND``, ``INVALID_RESOURCE_PATH`` (not under one of
    the three folders), ``RESOURCE_NOT_FOUND`` (``RESOURCE_NOT_FOUND_FATAL`` from the
    second miss of an invocation on)."""

    TOOL_NAME = names.LOAD_SKILL_RESOURCE

    def __init__(self, toolset: SkillToolset) -> None:
        super().__init__(toolset, "Reads one file of a skill, from its references/, assets/ or scripts/ folder.")

    def _get_declaration(self) -> FunctionDeclaration:
        return self._declare(object_schema({
            "skill_name": string_schema("Name of the skill."),
            "file_path": string_schema("Path of the file inside the skill, such as 'references/guide.md',"
                                 " 'assets/template.txt' or 'scripts/setup.sh'."),
        }, ["skill_name", "file_path"]))

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        invalid = missing(args, "skill_name", "file_path")
        if invalid is not None:
            return invalid
        skill_name: str = args["skill_name"]
        file_path: str = args["file_path"]
        skill, failed = await fetch_or_error(self._toolset, skill_name, tool_context.invocation_id)
        if skill is None:
            return failed
        if not file_path.startswith(_FOLDERS):
            return error("The path has to start with 'references/', 'assets/' or 'scripts/'.",
                         "INVALID_RESOURCE_PATH")
        content = resource_of(skill, file_path)
        if content is None:
            misses = count_failure(tool_context, "resource")
            if misses > 1:
                return error(f"The skill '{skill_name}' has no file '{file_path}'. That is {misses} failed"
                             " lookups in this turn: do not try another path; tell the user and stop.",
                             "RESOURCE_NOT_FOUND_FATAL")
            return error(f"The skill '{skill_name}' has no file '{file_path}'.", "RESOURCE_NOT_FOUND")
        if isinstance(content, bytes):
            return {"skill_name": skill_name, "file_path": file_path, "status": BINARY_FILE_STATUS}
        return {"skill_name": skill_name, "file_path": file_path, "content": content}

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: LlmRequest) -> None:
        """For each response of this tool in the request's last message that reported a
        binary reference or asset: a user message is appended holding a line naming the
        file and its bytes (MIME type guessed from the name, else
        ``application/octet-stream``). A skill the registry fails to give is logged and
        skipped."""
        if not llm_request.contents:
            return
        for part in llm_request.contents[-1].parts or []:
            answer = part.function_response
            if answer is None or answer.name != self.name:
                continue
            response = answer.response if isinstance(answer.response, dict) else {}
            skill_name, file_path = response.get("skill_name"), response.get("file_path")
            if response.get("status") != BINARY_FILE_STATUS or not skill_name or not file_path:
                continue
            try:
                skill = await self._toolset._get_or_fetch_skill(skill_name, tool_context.invocation_id)
            except Exception as exc:
                _log.warning("skill %r could not be fetched to attach %r: %s", skill_name, file_path, exc)
                continue
            content = resource_of(skill, file_path) if skill is not None else None
            if not isinstance(content, bytes) or file_path.startswith("scripts/"):
                continue
            mime_type = mimetypes.guess_type(file_path)[0] or "application/octet-stream"
            llm_request.contents.append(Content(role="user", parts=[
                Part(text=f"The skill file '{file_path}' follows:"),
                Part(inline_data=Blob(data=content, mime_type=mime_type))]))
