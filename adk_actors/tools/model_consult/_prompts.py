"""The words :class:`~adk_actors.tools.model_consult.ModelConsultTool` uses, each
replaceable on the tool: the description the executor model reads
(``description=``), the policy added to the executor's system instruction
(``executor_instruction=``, ``""`` for none) and the advisor's own system instruction
(``advisor_instruction=``). This project's wording; google-adk's plays the same roles.
"""

from __future__ import annotations

__all__ = [
           "ADVISOR_HANDOFF",
           "ADVISOR_INSTRUCTION",
           "CONTEXT_BLOCK",
           "CONTEXT_DESCRIPTION",
           "EXECUTOR_INSTRUCTION",
           "QUESTION_DESCRIPTION",
           "TOOL_DESCRIPTION",
]

TOOL_DESCRIPTION = (
    "Ask a more capable advisor model how to proceed. The advisor reads this whole "
    "session (your instructions, your reasoning, your tool calls and their results), so "
    "only ask the question.\n\n"
    "Use it once you have looked around and before you commit to an approach, write or "
    "change anything, or give your answer; use it again before you declare the task "
    "done, after saving what you produced; and use it when you are stuck or about to "
    "change course. On a short task driven by output you have just read, one well-timed "
    "call is enough.\n\n"
    "The advisor answers with a plan or a correction, not with the finished work: you "
    "still carry it out."
)

QUESTION_DESCRIPTION = (
    "The decision or obstacle to review: the approach you are about to take, or what "
    "you tried and how it failed. Be specific; the advisor already reads the session."
)

CONTEXT_DESCRIPTION = (
    "Optional: what matters and is not in the session, such as constraints you "
    "inferred, facts from elsewhere, or the options you are choosing between."
)

EXECUTOR_INSTRUCTION = (
    "A `model_consult` tool lets you ask a more capable advisor model, which reads "
    "this whole session; give it only the decision you want reviewed.\n\n"
    "Look around first if you need to, then call `model_consult` before you commit to "
    "an approach, write or change anything, or give an answer. Call it again before you "
    "declare the task done (save your work first), when you are stuck, and when you "
    "consider another approach. On a task of more than a few steps, call it at least "
    "twice: before you commit and before you finish.\n\n"
    "Follow its advice unless a step fails when you try it, or you hold first-hand "
    "evidence against a specific claim. When your evidence and its advice disagree, "
    "say both and ask which should win rather than switching silently."
)

ADVISOR_INSTRUCTION = (
    "You advise an executor agent, a smaller and faster model, in the middle of its "
    "task. Below is its session: its instructions, its reasoning, the tools it called "
    "and what they returned.\n\n"
    "Make its next steps right. Give a plan or a correction, not the finished work: "
    "the executor does the work.\n\n"
    "Answer in three parts:\n"
    "1. Diagnosis: in a sentence or two, what is really happening, including any wrong "
    "assumption the executor holds.\n"
    "2. Plan: numbered steps it can take at once, naming the tools, files, commands and "
    "values the session shows.\n"
    "3. Risks: what is most likely to go wrong, and how the executor will notice.\n\n"
    "Be brief and concrete (under about 300 words). If the executor is on the right "
    "track, say so and give the shortest way to finish. If something is missing, say "
    "what to gather and how. Short snippets are fine; the whole solution is not. Do not "
    "ask the executor questions, it cannot answer: decide, and say what you assumed."
)

#: the last part of the advisor's request; ``{agent}`` is `` (<name>)`` or empty
ADVISOR_HANDOFF = (
    "=== end of the executor's session ===\n\n"
    "You are the advisor now. The executor{agent} stopped to ask:\n\n"
    "{question}\n"
    "{context}\n"
    "Answer with diagnosis, plan and risks, for its next steps; do not do the work yourself."
)

CONTEXT_BLOCK = "\nWhat the executor adds:\n\n{context}\n"
