"""The data of one code run (google-adk's ``code_execution_utils`` names): the files
it is given, its input, its result; and the parts that show a run in an event."""

from __future__ import annotations

import base64
import binascii
import dataclasses

from .._types import Part

__all__ = ["CodeExecutionInput", "CodeExecutionResult", "CodeExecutionUtils", "File"]


@dataclasses.dataclass(frozen=True)
class File:
    """A file given to or made by a code run: its name (with extension), its content
    (bytes, or base64 text) and MIME type."""

    name: str
    content: str | bytes
    mime_type: str = "text/plain"


@dataclasses.dataclass
class CodeExecutionInput:
    """What to run: the code, the files it may read, and, for a stateful executor, the
    id of the execution whose variables it continues (None: a fresh one)."""

    code: str
    input_files: list[File] = dataclasses.field(default_factory=list)
    execution_id: str | None = None


@dataclasses.dataclass
class CodeExecutionResult:
    """What a run gave: its standard output and error (a non-empty ``stderr`` marks the
    run failed), the files it made, and its exit status (None when not known)."""

    stdout: str = ""
    stderr: str = ""
    output_files: list[File] = dataclasses.field(default_factory=list)
    exit_code: int | None = None


class CodeExecutionUtils:
    """google-adk's helpers that build the parts showing a run.

    Our ``Content`` is frozen, so the two helpers of google-adk that change a content in
    place (extracting the first code block, converting code parts to text) are
    functions that return a new content, in ``adk_actors.engine``'s code-execution
    step, not methods here.
    """

    @staticmethod
    def get_encoded_file_content(data: bytes) -> bytes:
        """``data`` as base64: unchanged when it already is base64 (decoding and
        re-encoding gives it back), encoded otherwise."""
        try:
            if base64.b64encode(base64.b64decode(data)) == data:
                return data
        except binascii.Error:
            pass
        return base64.b64encode(data)

    @staticmethod
    def build_executable_code_part(code: str) -> Part:
        """A part with ``code`` as Python code to run."""
        return Part.from_executable_code(code=code, language="PYTHON")

    @staticmethod
    def build_code_execution_result_part(code_execution_result: CodeExecutionResult) -> Part:
        """The part that shows a run's result, by google-adk's rules: a run with anything
        on stderr failed (``OUTCOME_FAILED``, the output is its stderr); otherwise
        ``OUTCOME_OK`` with "Code execution result:" and the stdout (also when there is
        neither output nor files), then "Saved artifacts:" and the files' names in
        backquotes, the two blocks a blank line apart."""
        result = code_execution_result
        if result.stderr:
            return Part.from_code_execution_result(outcome="OUTCOME_FAILED", output=result.stderr)
        blocks = []
        if result.stdout or not result.output_files:
            blocks.append(f"Code execution result:\n{result.stdout}\n")
        if result.output_files:
            blocks.append("Saved artifacts:\n" + ",".join(f"`{f.name}`" for f in result.output_files))
        return Part.from_code_execution_result(outcome="OUTCOME_OK", output="\n\n".join(blocks))
