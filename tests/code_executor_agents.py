"""An agent with a sandboxed code executor, run by the code-executor tests inside a
host's actor processes (imported there by path)."""

from __future__ import annotations

from adk_actors import LlmAgent, LlmRequest
from adk_actors.code_executors import SandboxedCodeExecutor
from adk_actors.models import ScriptedModel

CODE = {
    "allocate": "data = bytearray(2 * 1024 ** 3)",
    "loop": "while True:\n    pass",
    "add": "print(20 + 22)",
}


def _answer(request: LlmRequest) -> str:
    """Code for the user's word; once a result is shown, that result's lines."""
    last = request.contents[-1].text
    if last.startswith("```tool_output\n"):
        shown = last.removeprefix("```tool_output\n").removesuffix("\n```")
        return "result: " + " | ".join(line for line in shown.splitlines() if line)
    return f"```python\n{CODE[last]}\n```"


coder = LlmAgent(name="coder", model=ScriptedModel(fallback=_answer),
                 code_executor=SandboxedCodeExecutor(cpu_seconds=1, memory_bytes=256 << 20, timeout_seconds=120))

APPS = {"coder": "code_executor_agents:coder"}
