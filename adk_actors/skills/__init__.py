"""Agent Skills (google-adk's ``google.adk.skills``): folders of instructions and files
a model loads when a task needs them, through ``adk_actors.tools.skill_toolset``.

The models (:class:`Skill`, :class:`Frontmatter`, :class:`Resources`,
:class:`Script`), the loaders of a local folder (``load_skill_from_dir``,
``load_skills_from_dir``, ``list_skills_in_dir`` and their ``_async`` forms) and
:class:`SkillRegistry`. The Google Cloud Storage loaders (``*_gcs_dir*``) exist with
google-adk's arguments and raise :class:`~adk_actors.errors.ServiceUnavailableError`:
this project has no Google Cloud Storage client. ``DEFAULT_SKILL_SYSTEM_INSTRUCTION``
is reachable here, as in google-adk, with a ``DeprecationWarning``.
"""

import warnings
from typing import Any

from . import _instruction
from ._loader import list_skills_in_dir as list_skills_in_dir
from ._loader import list_skills_in_dir_async as list_skills_in_dir_async
from ._loader import list_skills_in_gcs_dir as list_skills_in_gcs_dir
from ._loader import list_skills_in_gcs_dir_async as list_skills_in_gcs_dir_async
from ._loader import load_skill_from_dir as load_skill_from_dir
from ._loader import load_skill_from_dir_async as load_skill_from_dir_async
from ._loader import load_skill_from_gcs_dir as load_skill_from_gcs_dir
from ._loader import load_skill_from_gcs_dir_async as load_skill_from_gcs_dir_async
from ._loader import load_skills_from_dir as load_skills_from_dir
from ._loader import load_skills_from_dir_async as load_skills_from_dir_async
from .models import Frontmatter, Resources, Script, Skill
from .prompt import format_skills_as_xml
from .skill_registry import SkillRegistry

__all__ = [
    "DEFAULT_SKILL_SYSTEM_INSTRUCTION",
    "Frontmatter",
    "Resources",
    "Script",
    "Skill",
    "SkillRegistry",
    "format_skills_as_xml",
    "list_skills_in_dir",
    "list_skills_in_dir_async",
    "list_skills_in_gcs_dir",
    "list_skills_in_gcs_dir_async",
    "load_skill_from_dir",
    "load_skill_from_dir_async",
    "load_skill_from_gcs_dir",
    "load_skill_from_gcs_dir_async",
    "load_skills_from_dir",
    "load_skills_from_dir_async",
]


def __getattr__(name: str) -> Any:
    """``DEFAULT_SKILL_SYSTEM_INSTRUCTION``, with a ``DeprecationWarning`` naming its
    home (``adk_actors.tools.skill_toolset``), as google-adk warns."""
    if name == "DEFAULT_SKILL_SYSTEM_INSTRUCTION":
        warnings.warn("DEFAULT_SKILL_SYSTEM_INSTRUCTION has moved: import it from"
                      " adk_actors.tools.skill_toolset, not adk_actors.skills.",
                      DeprecationWarning, stacklevel=2)
        return _instruction.DEFAULT_SKILL_SYSTEM_INSTRUCTION
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
