"""google-adk's ``ToolCallIntegrityPlugin`` (``google.adk.plugins``; its private module
``_tool_call_integrity_plugin``): an HMAC on every function call a session stores, so
that a call whose arguments someone changed in the session store cannot run.

In order:

1. when an agent makes an event (``on_event_callback``), before it is stored: a
   complete event that repeats a function-call id is refused
   (:class:`ToolCallIntegrityError`; none of its calls runs); each call with an id is
   stamped ``"v1:" + HMAC-SHA256(first key, payload)`` under
   ``custom_metadata["__adk_internal_fc_hmac"]`` (``{call id: stamp}``). The payload
   is the canonical JSON (sorted keys, no spaces, whole floats as ints) of the
   session's app, user and id, the event's invocation, branch and author, and the
   call's name, id and arguments in their JSON form;
2. before each run (``before_run_callback``): every function call with an id in the
   session's events (but events marked restored) is checked against its stamp with
   every key given; a missing stamp (unless ``allow_unstamped_calls``: a warning), a
   wrong, malformed or repeated one, or a stamp left with no call is refused;
3. before a tool runs (``before_tool_callback``): the call must have an id, every
   stored copy of it must verify, none may come from restored history, and the tool's
   name and arguments must be those of a verified copy.

A refusal raises :class:`ToolCallIntegrityError` (a ``ValueError``); the pipeline
ends the run with google-adk's ``RuntimeError`` (``adk_actors.plugins.PluginError``)
whose cause it is. Register it before other plugins: the first ``on_event_callback``
that answers ends the chain, and a later plugin must not change the calls nor replace
``custom_metadata``. A tool run as a workflow graph's node (its arguments come from
the graph, not from a stored call) is not checked.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Sequence
from typing import Any

from .base_plugin import BasePlugin

__all__ = ["ToolCallIntegrityError", "ToolCallIntegrityPlugin"]

logger = logging.getLogger("adk_actors.plugins.tool_call_integrity")

#: ``custom_metadata`` keys only the framework writes start so (google-adk's prefix)
_INTERNAL_PREFIX = "__adk_internal_"
#: the stamps of an event's calls: ``{call id: stamp}``
_HMAC_META_KEY = _INTERNAL_PREFIX + "fc_hmac"
#: set on an event copied into a session from elsewhere (its calls never run)
_RESTORED_EVENT_KEY = _INTERNAL_PREFIX + "restored_event"
_STAMP_PREFIX = "v1:"


class ToolCallIntegrityError(ValueError):
    """A function call stored in the session failed its integrity check."""


def _whole(value: Any) -> Any:
    """``value`` with each whole float as an int, inside dicts and lists (a store may
    give back ``1.0`` for ``1``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _whole(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_whole(item) for item in value]
    return value


def _canonical(value: Any) -> str:
    return json.dumps(_whole(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _json_args(function_call: Any) -> dict[str, Any]:
    """The call's arguments as the session stores write them (JSON values)."""
    args = function_call.model_dump(mode="json", include={"args"}).get("args")
    return args or {}


def _session_id(session: Any) -> Any:
    return getattr(session, "id", None) or getattr(session, "session_id", None)


def _payload(session: Any, event: Any, function_call: Any) -> bytes:
    """What a stamp covers (see the module)."""
    return _canonical({
        "app_name": session.app_name, "user_id": session.user_id, "session_id": _session_id(session),
        "invocation_id": event.invocation_id, "branch": event.branch, "author": event.author,
        "name": function_call.name, "id": function_call.id, "args": _json_args(function_call),
    }).encode()


def _restored(event: Any) -> bool:
    return bool((event.custom_metadata or {}).get(_RESTORED_EVENT_KEY))


def _stamps(event: Any) -> dict[str, str]:
    """The event's stamps; a ToolCallIntegrityError when they are not a map of ids to
    ASCII texts."""
    stamps = (event.custom_metadata or {}).get(_HMAC_META_KEY)
    if stamps is None:
        return {}
    if not (isinstance(stamps, dict) and all(isinstance(k, str) and isinstance(v, str) and v.isascii()
                                             for k, v in stamps.items())):
        raise ToolCallIntegrityError(f"Event {event.id!r} has a malformed integrity stamp.")
    return stamps


def _is_graph_node_tool(tool_context: Any) -> bool:
    """Whether the tool runs as a workflow graph's node (not answering a stored call)."""
    node = getattr(tool_context, "node", None)
    return node is not None and type(node).__name__ in ("_ToolNode", "ToolNode")


class ToolCallIntegrityPlugin(BasePlugin):
    """Stamps function calls with an HMAC and checks them before runs and tool calls
    (see the module).

    ``secret_key``: bytes, or a list of them while keys rotate (the first stamps,
    each verifies); empty, or a key that is not non-empty bytes, is a ``ValueError``.
    ``allow_unstamped_calls``: a call without a stamp (stored before the plugin was
    installed) is logged and allowed to run instead of refused; a wrong stamp is always
    refused."""

    def __init__(self, secret_key: bytes | Sequence[bytes], *, allow_unstamped_calls: bool = False,
                 name: str = "tool_call_integrity") -> None:
        super().__init__(name)
        keys = [secret_key] if isinstance(secret_key, bytes) else list(secret_key)
        if not keys or not all(isinstance(key, bytes) and key for key in keys):
            raise ValueError("secret_key must be non-empty bytes or a non-empty list of them.")
        self._keys: list[bytes] = keys
        self._allow_unstamped_calls = allow_unstamped_calls

    @staticmethod
    def prepare_restored_event(event: Any) -> Any:
        """A deep copy of ``event`` to append to another session: its framework-only
        metadata dropped and marked restored (its history passes the checks; its calls
        never run). ``event`` is not changed."""
        copy = event.model_copy(deep=True)
        kept = {key: value for key, value in (copy.custom_metadata or {}).items()
                if not (isinstance(key, str) and key.startswith(_INTERNAL_PREFIX))}
        copy.custom_metadata = {**kept, _RESTORED_EVENT_KEY: True}
        return copy

    def _sign(self, payload: bytes) -> str:
        return _STAMP_PREFIX + hmac.new(self._keys[0], payload, hashlib.sha256).hexdigest()

    def _verify(self, payload: bytes, stamp: str) -> bool:
        if not stamp.startswith(_STAMP_PREFIX):
            return False
        digest = stamp[len(_STAMP_PREFIX):]
        return any(hmac.compare_digest(hmac.new(key, payload, hashlib.sha256).hexdigest(), digest)
                   for key in self._keys)

    def _unstamped(self, name: Any, call_id: Any) -> None:
        if not self._allow_unstamped_calls:
            raise ToolCallIntegrityError(f"{name} call {call_id!r} has no integrity stamp.")
        logger.warning("%s call %r has no integrity stamp.", name, call_id)

    async def on_event_callback(self, *, invocation_context: Any, event: Any) -> Any:
        """Stamps the event's calls in place (step 1 of the module); answers None."""
        session = invocation_context.session
        calls = [call for call in event.get_function_calls() if call.id]
        if not event.partial:
            seen: set[str] = set()
            for call in calls:
                if call.id in seen:
                    raise ToolCallIntegrityError(f"Event {event.id!r} repeats function call ID {call.id!r}.")
                seen.add(call.id)
        stamps = {call.id: self._sign(_payload(session, event, call)) for call in calls}
        if stamps:
            event.custom_metadata = {**(event.custom_metadata or {}), _HMAC_META_KEY: stamps}
        return None

    async def before_run_callback(self, *, invocation_context: Any) -> Any:
        """Checks every stored call against its stamp (step 2 of the module)."""
        session = invocation_context.session
        for event in session.events:
            calls = event.get_function_calls()
            if not calls or _restored(event):
                continue
            stamps = _stamps(event)
            verified: set[str] = set()
            for call in calls:
                if not call.id:
                    continue
                if call.id not in stamps:
                    self._unstamped(call.name, call.id)
                    continue
                if call.id in verified:
                    raise ToolCallIntegrityError(f"Event {event.id!r} has duplicate function call ID {call.id!r}.")
                if not self._verify(_payload(session, event, call), stamps[call.id]):
                    raise ToolCallIntegrityError(f"{call.name} call {call.id!r} does not match its integrity stamp.")
                verified.add(call.id)
            unmatched = stamps.keys() - verified
            if unmatched:
                raise ToolCallIntegrityError(
                    f"Event {event.id!r} has integrity stamps with no matching call: {sorted(unmatched)}.")
        return None

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> Any:
        """Lets the tool run only as a verified stored call (step 3 of the module)."""
        if _is_graph_node_tool(tool_context):
            return None
        call_id = tool_context.function_call_id
        if not call_id:
            raise ToolCallIntegrityError(f"{tool.name} call has no ID, so its integrity cannot be checked.")
        session = tool_context.session
        stored: list[tuple[Any, Any]] = []
        restored = False
        for event in session.events:
            for call in event.get_function_calls():
                if call.id != call_id:
                    continue
                if _restored(event):
                    restored = True
                else:
                    stored.append((event, call))
        if not stored:
            if restored:
                raise ToolCallIntegrityError(
                    f"{tool.name} call {call_id!r} comes from restored history and cannot be executed.")
            self._unstamped(tool.name, call_id)
            return None
        trusted = []
        for event, call in stored:
            stamp = _stamps(event).get(call_id)
            if stamp is None:
                self._unstamped(tool.name, call_id)
            elif not self._verify(_payload(session, event, call), stamp):
                raise ToolCallIntegrityError(f"{tool.name} call {call_id!r} does not match its integrity stamp.")
            trusted.append(call)
        running = _canonical(_json_args(stored[0][1].model_copy(update={"args": tool_args})))
        if not any(call.name == tool.name and _canonical(_json_args(call)) == running for call in trusted):
            raise ToolCallIntegrityError(f"{tool.name} call {call_id!r} arguments do not match its stored call.")
        return None
