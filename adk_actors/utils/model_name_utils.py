"""google-adk's ``google.adk.utils.model_name_utils``: what a model's name says.

The path stripping and the Gemini check are the project's own
(:mod:`adk_actors._model_names`, which the models and tools use); the version
checks google-adk keeps for old callers read the stripped name.
"""

from __future__ import annotations

import re
import warnings

from packaging.version import InvalidVersion, Version

from .._model_names import bare_model_name, gemini_check_disabled
from .._model_names import is_gemini_model as _is_gemini_model

__all__ = ["extract_model_name", "is_gemini_1_model", "is_gemini_3_5_live_translate", "is_gemini_eap_or_2_or_above",
           "is_gemini_model", "is_gemini_model_id_check_disabled"]

_EAP = re.compile(r"^gemini-(?:[a-z0-9_]+(?:-[a-z0-9_]+)*-)?early-exp\d*$")
_DEPRECATED = ("ADK no longer distinguishes Gemini versions (Gemini 1.x is retired); use is_gemini_model")


def is_gemini_model_id_check_disabled() -> bool:
    """Whether ``ADK_DISABLE_GEMINI_MODEL_ID_CHECK`` is on (``1``, ``true``, ``yes``, ``on``)."""
    return gemini_check_disabled()


def extract_model_name(model_string: str) -> str:
    """``model_string`` without a Vertex AI, Apigee, ``models/`` or provider
    (``gemini/``) path; any other name as it is."""
    return bare_model_name(model_string)


def is_gemini_model(model_string: str | None) -> bool:
    """Whether the bare name starts with ``gemini-`` (False for None or "")."""
    return _is_gemini_model(model_string)


def is_gemini_1_model(model_string: str | None) -> bool:
    """Deprecated (warns): whether the bare name is ``gemini-1.<n>...``."""
    warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
    return bool(model_string) and re.match(r"^gemini-1\.\d+", bare_model_name(model_string or "")) is not None


def is_gemini_eap_or_2_or_above(model_string: str | None) -> bool:
    """Deprecated (warns): whether the name is an early-access Gemini
    (``gemini-[variant-]early-exp[n]``) or its version after ``gemini-`` reads as
    2 or above; False for anything else."""
    warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
    if not model_string:
        return False
    name = bare_model_name(model_string)
    if _EAP.match(name):
        return True
    if not name.startswith("gemini-"):
        return False
    version = name[len("gemini-"):].split("-", 1)[0]
    if not version:
        return False
    try:
        return Version(version).major >= 2
    except InvalidVersion:
        return False


def is_gemini_3_5_live_translate(model_string: str | None) -> bool:
    """Whether the bare name starts with ``gemini-3.5-live-translate``."""
    return bool(model_string) and bare_model_name(model_string or "").startswith("gemini-3.5-live-translate")
