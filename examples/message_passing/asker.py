"""An actor that uses an agent only by message passing (no Runner, no threads).

``Asker`` is a GenServer. ``Cast(("ask", user, session, text))`` makes it send a
``Call(RunRequest)`` addressed to the session: to the host's session supervisor,
which hands it to the partition holding the session now (a partition that
restarts meanwhile gets it once it runs again). It then receives the
run's ``AdkEvent`` messages and the terminal ``RunDone`` / ``RunFailed`` in its
mailbox like any other message (those ready together in one ``RunMessages``
envelope), and keeps the final answers. ``Call("answers")``
returns them. Run ``python examples/message_passing/asker.py`` for a demo.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from adk_actors import Content
from adk_actors.messages import AdkEvent, RunAccepted, RunDone, RunFailed, RunMessages, RunRequest
from supervision import CallerRef, GenServer
from supervision.protocol import Call, Cast, ErrorReply, Reply


class Asker(GenServer):
    def init(self, args: dict[str, Any]) -> None:
        self.app = args["app"]
        self.sessions = args["sessions"]  # Host.sessions_address()
        self.answers: dict[str, str] = {}  # run id -> final text (or the failure)
        self.texts: dict[str, str] = {}

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, tuple) and request[0] == "ask":
            _, user, session, text = request
            run = RunRequest(self.app, user, session, new_message=Content.user(text))
            self.send(self.sessions, Call(run))
        else:
            super().handle_cast(request)

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "answers":
            return dict(self.answers)
        return super().handle_call(request, caller)

    def handle_info(self, message: Any, sender: Any) -> None:
        if isinstance(message, Reply) and isinstance(message.value, RunAccepted):
            return  # the run is on its way
        if isinstance(message, RunMessages):  # several of a run's messages at once, in order
            for each in message.messages:
                self.handle_info(each, sender)
        elif isinstance(message, ErrorReply):
            self.answers[message.ref or "?"] = f"refused: {message.code}"
        elif isinstance(message, AdkEvent):
            event = message.event
            if event.author != "user" and event.content is not None and event.content.text and not event.partial:
                self.texts[message.run_id] = event.content.text
        elif isinstance(message, RunDone):
            self.answers[message.run_id] = self.texts.pop(message.run_id, "")
        elif isinstance(message, RunFailed):
            self.answers[message.run_id] = f"failed: {message.reason}"
        else:
            super().handle_info(message, sender)


def main() -> None:
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from adk_actors.runtime import Host, HostConfig
    from supervision import call, start_server
    from supervision.testing import running_actor_system, wait_until

    work = tempfile.mkdtemp(prefix="asker-")
    with running_actor_system(Path(work) / "logs") as system:
        with Host(HostConfig(apps={"echo": "examples.message_passing.asker:echo_agent"}, data_dir=work),
                  system=system) as host:
            host.runner("echo").create_session("ann", "s1")
            asker = start_server(system, Asker, {"app": "echo", "sessions": host.sessions_address()})
            system.tell(asker, Cast(("ask", "ann", "s1", "hello from an actor")))
            answers = wait_until(lambda: call(system, asker, "answers"), timeout=10)
            print("the asker actor got:", answers)


def _echo(request: Any) -> str:
    return f"echo: {request.contents[-1].text}"


def _agent() -> Any:
    from adk_actors import LlmAgent
    from adk_actors.models import ScriptedModel

    return LlmAgent(name="echo", model=ScriptedModel(fallback=_echo))


echo_agent = _agent()

if __name__ == "__main__":
    main()
