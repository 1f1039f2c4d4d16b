"""google-adk's ``google.adk.utils.instructions_utils``: :func:`inject_session_state`
for an instruction provider that wants the ``{var}`` / ``{var?}`` /
``{artifact.NAME}`` filling a string instruction gets, and the names it re-exports
(``InstructionProvider``, ``ReadonlyContext``).

The placeholders are read and filled by the request compiler's one rule (see
:mod:`adk_actors.utils._template_rule`); what this adds is google-adk's strictness
for an explicit call: a required value that is missing raises instead of staying
as written.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from typing import Any

from .._types import Part
from ..agents.readonly_context import ReadonlyContext
from ..compiler import Verbatim
from ..plugins.global_instruction_plugin import InstructionProvider
from ..tools._load_artifacts import _readable
from ._template_rule import fill, placeholders

__all__ = ["InstructionProvider", "ReadonlyContext", "inject_session_state"]

_log = logging.getLogger("adk_actors.utils")


def _artifact_text(artifact: Any, name: str) -> str:
    """A loaded artifact as instruction text: a Part as a model may read it inline
    (its text, or a text-like file's text), else the artifact's ``str()``."""
    if isinstance(artifact, str):
        return artifact
    part = artifact if isinstance(artifact, Part) else None
    if part is None and hasattr(artifact, "model_dump"):
        try:
            part = Part.model_validate(artifact.model_dump(exclude_none=True))
        except Exception:
            part = None
    if part is not None:
        text = _readable(part, name).text
        if text is not None:
            return text
    return str(artifact)


async def _load_artifact(context: Any, name: str) -> Any:
    """The artifact ``name`` through what ``context`` offers, in order: its
    ``load_artifact`` (a callback or tool context; awaited when it gives an
    awaitable), the artifacts a compile context was given; None when there is no
    such artifact. A context with neither raises ``ValueError``."""
    loader = getattr(context, "load_artifact", None)
    if callable(loader):
        found = loader(name)
        return await found if inspect.isawaitable(found) else found
    given = getattr(context, "artifacts", None)
    if isinstance(given, Mapping):
        return given.get(name)
    raise ValueError("Artifact service is not initialized.")


async def inject_session_state(template: str, readonly_context: ReadonlyContext, use_jinja2: bool = False) -> str:
    """``template`` with its placeholders filled from ``readonly_context``, as
    google-adk's function of this name.

    Without ``use_jinja2``, in order: a template with no ``{`` is returned as it is;
    each placeholder, left to right, is checked: ``{artifact.NAME}`` loads NAME (see
    :func:`_load_artifact`; a context that can load none raises ``ValueError``), a
    required one that does not exist raises ``KeyError``; a valid state key
    (``name``, ``app:name``, ``user:name``, ``temp:name``) that is required and not
    in the state raises ``KeyError``. Then the compiler's rule fills the template
    (``None`` as "", a missing optional one as "", an invalid name left as written)
    and the text is returned marked :class:`~adk_actors.compiler.Verbatim`, so the
    compiler does not fill the provider's text a second time (google-adk fills a
    provider's text only through this call).

    With ``use_jinja2``: the template rendered by a sandboxed Jinja2 environment
    (strict about undefined names), the state's keys as variables, ``state`` as the
    whole state and ``artifact(name)`` loading an artifact's text (``KeyError`` if
    missing); ``ImportError`` when jinja2 is not installed.
    """
    if use_jinja2:
        return await _render_with_jinja2(template, readonly_context)
    if "{" not in template:
        return template
    state: Mapping[str, Any] = readonly_context.state
    agent = getattr(readonly_context, "agent_name", "?")
    loaded: dict[str, str] = {}
    for placeholder in placeholders(template):
        if placeholder.artifact is not None:
            name = placeholder.artifact
            if name in loaded:
                continue
            artifact = await _load_artifact(readonly_context, name)
            if artifact is None:
                if not placeholder.optional:
                    raise KeyError(f"Artifact '{name}' not found in agent '{agent}'.")
                _log.debug("artifact %s not found: its optional placeholder becomes ''", name)
                continue
            loaded[name] = _artifact_text(artifact, name)
        elif placeholder.key is not None and placeholder.key not in state and not placeholder.optional:
            raise KeyError(f"Context variable not found: `{placeholder.key}` in agent '{agent}'.")
    return Verbatim(fill(template, state, loaded))


async def _render_with_jinja2(template: str, readonly_context: ReadonlyContext) -> str:
    """``template`` rendered by Jinja2 (see :func:`inject_session_state`)."""
    try:
        import jinja2
        from jinja2.sandbox import SandboxedEnvironment
    except ImportError as exc:
        raise ImportError("rendering an instruction with Jinja2 needs the jinja2 package (pip install jinja2)") from exc
    agent = getattr(readonly_context, "agent_name", "?")

    async def artifact(name: str) -> str:
        found = await _load_artifact(readonly_context, name)
        if found is None:
            raise KeyError(f"Artifact '{name}' not found in agent '{agent}'.")
        return _artifact_text(found, name)

    environment = SandboxedEnvironment(enable_async=True, undefined=jinja2.StrictUndefined, autoescape=False)
    variables: dict[str, Any] = dict(readonly_context.state)
    variables["state"] = readonly_context.state
    variables["artifact"] = artifact
    text: str = await environment.from_string(template).render_async(**variables)
    return Verbatim(text)
