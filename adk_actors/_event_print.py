"""One event as the lines google-adk's ``Runner.run_debug`` prints for it.

For each part of the event's content, in order: consecutive text parts are printed
together as one line ``<author> > <texts>``; thoughts are skipped unless ``verbose``
(then printed as text). Other parts print only when ``verbose``, one line each: a
tool call as ``[Calling tool: name(args)]`` (the args' repr cut to 50 characters and
``...``), a tool result as ``[Tool result: response]`` (cut to 100), code to run as
``[Executing <language> code...]``, a code result as ``[Code output: output]`` (cut to
100), inline data as ``[Inline data: <mime type>]``. An event without parts prints
nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["print_event"]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _verbose_line(part: Any) -> str | None:
    if part.function_call is not None:
        return f"[Calling tool: {part.function_call.name}({_cut(str(part.function_call.args), 50)})]"
    if part.function_response is not None:
        return f"[Tool result: {_cut(str(part.function_response.response), 100)}]"
    if getattr(part, "executable_code", None) is not None:
        return f"[Executing {part.executable_code.language or 'code'} code...]"
    if getattr(part, "code_execution_result", None) is not None:
        return f"[Code output: {_cut(str(part.code_execution_result.output or 'result'), 100)}]"
    if part.inline_data is not None:
        return f"[Inline data: {part.inline_data.mime_type or 'data'}]"
    return None


def print_event(event: Any, *, verbose: bool = False) -> None:
    """Print ``event``'s lines (see the module) to stdout."""
    content = event.content
    if content is None or not content.parts:
        return
    texts: list[str] = []
    for part in content.parts:
        if part.thought and not verbose:
            continue
        if part.text:
            texts.append(part.text)
            continue
        if texts:
            print(f"{event.author} > {''.join(texts)}")
            texts.clear()
        line = _verbose_line(part) if verbose else None
        if line is not None:
            print(f"{event.author} > {line}")
    if texts:
        print(f"{event.author} > {''.join(texts)}")
