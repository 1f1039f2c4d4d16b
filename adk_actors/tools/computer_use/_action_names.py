"""The names of computer actions, older and newer, and how an exclusion list is read.

Gemini 2.x computer-use models call the older actions (``click_at``, ``hover_at``,
``type_text_at``, ``key_combination`` ...); Gemini 3 calls newer ones (``click``,
``move``, ``type``, ``press_key``, ``hotkey`` ...). A user excludes actions by either
name: :func:`expand_exclusions` gives every tool name that exclusion removes here,
and :func:`excluded_for_model` the names the model is told to leave out, in the
vocabulary of the request's model (a name that is not ``gemini-<number>...`` counts
as Gemini 3 or later).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from ..._model_names import bare_model_name

__all__ = ["EXCLUDED_METHODS", "OPTIONAL_KEY_ACTIONS", "OPTIONAL_MOUSE_ACTIONS", "excluded_for_model",
           "expand_exclusions", "is_legacy_gemini_model"]

#: BaseComputer methods that are never tools
EXCLUDED_METHODS = frozenset({"screen_size", "environment", "close", "prepare"})

#: each name and the names of the other generation it removes too
_COUNTERPARTS: Mapping[str, frozenset[str]] = MappingProxyType({
    "click_at": frozenset({"click"}),
    "hover_at": frozenset({"move"}),
    "type_text_at": frozenset({"type"}),
    "type_text": frozenset({"type"}),
    "scroll_at": frozenset({"scroll"}),
    "scroll_document": frozenset(),  # the whole page: nothing newer does it
    "current_state": frozenset({"take_screenshot"}),
    "key_combination": frozenset({"press_key", "hotkey"}),
    "wait_5_seconds": frozenset({"wait"}),
    "click": frozenset({"click_at"}),
    "move": frozenset({"hover_at"}),
    "type": frozenset({"type_text_at"}),
    "scroll": frozenset({"scroll_at"}),
    "take_screenshot": frozenset({"current_state"}),
    "press_key": frozenset(),  # key_combination only goes with both press_key and hotkey
    "hotkey": frozenset(),
    "wait": frozenset({"wait_5_seconds"}),
})

#: newer actions a computer may implement itself (none is offered otherwise)
OPTIONAL_MOUSE_ACTIONS = ("double_click", "triple_click", "middle_click", "right_click", "mouse_down", "mouse_up")
OPTIONAL_KEY_ACTIONS = ("key_down", "key_up")

_OLDER = frozenset({"click_at", "hover_at", "type_text_at", "type_text", "scroll_at", "scroll_document",
                    "current_state", "key_combination", "wait_5_seconds"})
_NEWER = frozenset({"click", "move", "type", "scroll", "take_screenshot", "press_key", "hotkey", "wait",
                    *OPTIONAL_MOUSE_ACTIONS, *OPTIONAL_KEY_ACTIONS})
_TYPING = frozenset({"type", "type_text_at", "type_text"})
_VERSION = re.compile(r"^v?(\d+)(?:\.\d+)*$")


def expand_exclusions(names: Iterable[str]) -> set[str]:
    """The tool names ``names`` exclude: each name, its counterparts of the other
    generation, all three typing actions when one is named, and ``key_combination``
    when both ``press_key`` and ``hotkey`` are."""
    expanded = set(names)
    for name in list(expanded):
        expanded |= _COUNTERPARTS.get(name, frozenset())
    if expanded & _TYPING:
        expanded |= _TYPING
    if {"press_key", "hotkey"} <= expanded:
        expanded.add("key_combination")
    return expanded


def gemini_major_version(model: str | None) -> int | None:
    """The major version a ``gemini-<version>-...`` name states, or None (no name, not
    a Gemini name, a version that is not a number such as ``gemini-flash-latest``)."""
    if not model:
        return None
    name = bare_model_name(model)
    if not name.startswith("gemini-"):
        return None
    found = _VERSION.match(name[len("gemini-"):].split("-", 1)[0])
    return int(found.group(1)) if found else None


def is_legacy_gemini_model(model: str | None) -> bool:
    """Whether ``model`` states a Gemini version before 3 (it calls the older actions)."""
    major = gemini_major_version(model)
    return major is not None and major < 3


def excluded_for_model(names: list[str] | None, model: str | None,
                       not_implemented: Iterable[str] = ()) -> list[str] | None:
    """The actions the model is told to leave out, without repeats, in order.

    For a Gemini 2.x model: None when nothing was excluded; else each name in the
    older vocabulary (a newer name as its older counterparts, ``type_text`` as
    ``type_text_at``, ``press_key``/``hotkey`` as ``key_combination`` only when both
    are named). For any other model: each older name as its newer counterparts
    (``key_combination`` as ``press_key`` and ``hotkey``), and for a model that
    states Gemini 3 or later the optional newer actions the computer does not
    implement (``not_implemented``) too; None when that leaves nothing and nothing
    was excluded."""
    resolved: list[str] = []
    if is_legacy_gemini_model(model):
        if names is None:
            return None
        both_keys = {"press_key", "hotkey"} <= set(names)
        for name in names:
            if name in ("press_key", "hotkey"):
                if both_keys:
                    resolved.append("key_combination")
            elif name == "type_text":
                resolved.append("type_text_at")
            elif name in _NEWER:
                resolved.extend(sorted(_COUNTERPARTS.get(name, frozenset())))
            else:
                resolved.append(name)
        return list(dict.fromkeys(resolved))
    for name in names or ():
        if name == "key_combination":
            resolved.extend(("press_key", "hotkey"))
        elif name in _OLDER:
            resolved.extend(sorted(_COUNTERPARTS.get(name, frozenset())))
        else:
            resolved.append(name)
    major = gemini_major_version(model)
    if major is not None and major >= 3:
        resolved.extend(not_implemented)
    unique = list(dict.fromkeys(resolved))
    if not unique and names is None:
        return None
    return unique
