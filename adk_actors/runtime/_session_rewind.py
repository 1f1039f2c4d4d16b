"""The artifact side of a session's rewind, which its caller did already.

``Session.rewind`` builds the rewind event with ``_rewind.rewind_event``, which asks
for each artifact it restores to be saved: :class:`SavedVersions` answers with the
version the caller saved (``RewindSession.artifact_delta``), and raises
:class:`NotSaved` for one the caller did not save (the session changed meanwhile).
"""

from __future__ import annotations

from .._types import Part

__all__ = ["NotSaved", "SavedVersions"]


class NotSaved(Exception):
    """A rewind needs an artifact version its caller did not save."""


class SavedVersions:
    """The artifact side of a rewind its caller already did: ``rewind_event`` asks it to
    save each artifact it restores, and gets the version the caller saved."""

    def __init__(self, versions: dict[str, int]) -> None:
        self.versions = versions

    def load(self, app: str, user: str, session: str, name: str, version: int | None = None) -> Part:
        return Part(text=f"{name}@{version}")  # stands for the version the caller copied

    def save(self, app: str, user: str, session: str, name: str, part: Part) -> int:
        if name not in self.versions:
            raise NotSaved(f"artifact {name!r} was not restored")
        return self.versions[name]
