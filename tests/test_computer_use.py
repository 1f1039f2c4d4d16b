"""Computer use (issue 52): google-adk 2.13's ``google.adk.tools.computer_use`` at
``adk_actors.tools.computer_use``.

Side by side with google-adk: one program (a fake ``BaseComputer`` that records what
it is asked to do, a ``ComputerUseToolset`` over it, an agent on a Gemini
computer-use model) run on google-adk as written, then on ours with its imports
rewritten, against one Gemini REST stand-in scripted with the model's calls.
Compared: what the computer was asked (coordinates scaled to its screen), the events
(calls, responses, the screenshot parts of the responses), the tools the toolset
lists (names and declared parameters), and every model request (contents with the
screenshots as the model receives them, function declarations (none), Gemini's
``computerUse`` tool, whether a system instruction is sent).

Then a real browser: Debian's chromium driven through Playwright's async API by a
``BaseComputer`` subclass, on a page served on 127.0.0.1; the scripted model clicks a
button, the page changes, and the next request carries the screenshot showing it.
"""

from __future__ import annotations

import base64
import http.server
import threading
from collections.abc import Iterator
from typing import Any

import google_adk_harness as harness
import pytest
from console_browser import CHROMIUM
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program

from adk_actors.testing import StubServer, gemini_response

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
from typing import Literal

from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.computer_use.base_computer import BaseComputer, ComputerEnvironment, ComputerState
from google.adk.tools.computer_use.computer_use_toolset import ComputerUseToolset
from google.genai import types

DID = []


class FakeComputer(BaseComputer):
    """Records each action; every state is a new numbered screenshot."""

    def __init__(self):
        self.url = "https://example.com/start"
        self.shots = 0
        self.life = []

    async def initialize(self):
        self.life.append("initialize")

    async def close(self):
        self.life.append("close")

    async def screen_size(self) -> tuple[int, int]:
        return (1280, 720)

    async def environment(self) -> ComputerEnvironment:
        return ComputerEnvironment.ENVIRONMENT_BROWSER

    def _state(self, *did) -> ComputerState:
        DID.append(list(did))
        self.shots += 1
        return ComputerState(screenshot=b"PNG-%d" % self.shots, url=self.url)

    async def open_web_browser(self) -> ComputerState:
        return self._state("open_web_browser")

    async def click_at(self, x: int, y: int) -> ComputerState:
        return self._state("click_at", x, y)

    async def hover_at(self, x: int, y: int) -> ComputerState:
        return self._state("hover_at", x, y)

    async def type_text_at(self, x: int, y: int, text: str, press_enter: bool = True,
                           clear_before_typing: bool = True) -> ComputerState:
        return self._state("type_text_at", x, y, text, press_enter, clear_before_typing)

    async def scroll_document(self, direction: Literal["up", "down", "left", "right"]) -> ComputerState:
        return self._state("scroll_document", direction)

    async def scroll_at(self, x: int, y: int, direction: Literal["up", "down", "left", "right"],
                        magnitude: int) -> ComputerState:
        return self._state("scroll_at", x, y, direction, magnitude)

    async def wait(self, seconds: int) -> ComputerState:
        return self._state("wait", seconds)

    async def go_back(self) -> ComputerState:
        return self._state("go_back")

    async def go_forward(self) -> ComputerState:
        return self._state("go_forward")

    async def search(self) -> ComputerState:
        return self._state("search")

    async def navigate(self, url: str) -> ComputerState:
        self.url = url
        return self._state("navigate", url)

    async def key_combination(self, keys: list[str]) -> ComputerState:
        return self._state("key_combination", keys)

    async def drag_and_drop(self, x: int, y: int, destination_x: int, destination_y: int) -> ComputerState:
        return self._state("drag_and_drop", x, y, destination_x, destination_y)

    async def current_state(self) -> ComputerState:
        return self._state("current_state")


COMPUTER = FakeComputer()
TOOLSET = ComputerUseToolset(computer=COMPUTER, excluded_predefined_functions=EXCLUDED)
root_agent = Agent(name="browser", model=MODEL, instruction="Use the browser.", tools=[TOOLSET])


def _declared(tool):
    declared = tool._get_declaration()
    schema = declared.parameters_json_schema
    if schema is None and declared.parameters is not None:
        schema = declared.parameters.model_dump(exclude_none=True)
    return [declared.name, schema]


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="cu")
    session = await runner.session_service.create_session(app_name="cu", user_id="ann")
    message = types.Content(role="user", parts=[types.Part(text="press the button")])
    events = [e async for e in runner.run_async(user_id="ann", session_id=session.id, new_message=message)]
    asked = next((c for e in events for c in e.get_function_calls() if c.name == "adk_request_confirmation"), None)
    if asked is not None and ANSWER is not None:
        reply = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            name="adk_request_confirmation", id=asked.id, response=ANSWER))])
        events += [e async for e in runner.run_async(user_id="ann", session_id=session.id, new_message=reply)]
    tools = [_declared(t) for t in await TOOLSET.get_tools()]
    await runner.close()
    shots = [[(r.name, [(p.inline_data.mime_type, p.inline_data.data) for p in (r.parts or [])])
              for r in e.get_function_responses()] for e in events]
    return {"events": events, "did": list(DID), "tools": tools, "shots": shots, "life": list(COMPUTER.life)}
'''


def _types(schema: Any) -> Any:
    """A declared parameter schema as the parameters' names, types, defaults and enums,
    and which are required (type names lower-cased: google-adk may give a Gemini
    ``Schema`` with ``INTEGER``, ours JSON schema's ``integer``)."""
    if not schema:
        return None
    props: dict[str, dict[str, Any]] = {
        name: {key: (str(value).lower() if key == "type" else value) for key, value in prop.items()
               if key in ("type", "default", "enum", "items")}
        for name, prop in (schema.get("properties") or {}).items()}
    for prop in props.values():
        items: Any = prop.get("items")
        if isinstance(items, dict):
            prop["items"] = {k: str(v).lower() for k, v in items.items() if k == "type"}
    return {"properties": props, "required": sorted(schema.get("required") or [])}


def _gemini_tools(server: StubServer) -> list[dict[str, Any]]:
    """Per request: its Gemini tools that are not function declarations, and whether it
    had a system instruction."""
    return [{"tools": [t for t in r.body.get("tools", []) if "functionDeclarations" not in t],
             "instruction": "systemInstruction" in r.body} for r in server.requests]


def _rows(events: list[Any]) -> list[dict[str, Any]]:
    """``event_rows``, the id of the call a confirmation request names (random on both
    sides) given as whether it is the id of a call before it."""
    call_ids = [c.id for e in events for c in e.get_function_calls() if c.name != "adk_request_confirmation"]
    rows = event_rows(events)
    for row in rows:
        for _, name, args in row["calls"]:
            if name == "adk_request_confirmation":
                original = args["originalFunctionCall"]
                original["id"] = "the call's" if original.get("id") in call_ids else original.get("id")
    return rows


def _run(source: str, script: list[Any], server: StubServer) -> dict[str, Any]:
    _, result = run_program(source, script, server)
    return {"events": _rows(result["events"]), "did": result["did"], "life": result["life"],
            "tools": [[name, _types(schema)] for name, schema in result["tools"]],
            "shots": result["shots"], "requests": request_rows(server), "gemini_tools": _gemini_tools(server),
            "unused_answers": len(server.responses)}


def both(script: list[Any], server: StubServer, *, model: str = "gemini-2.5-computer-use-preview-10-2025",
         excluded: list[str] | None = None, answer: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The program on ``model``, ``excluded`` given to its toolset, the user answering a
    confirmation request with ``answer`` (None: not answering), run on google-adk, then
    on ours."""
    source = PROGRAM.replace("\nCOMPUTER = FakeComputer()",
                             f"\nMODEL = {model!r}\nEXCLUDED = {excluded!r}\nANSWER = {answer!r}\n"
                             "COMPUTER = FakeComputer()")
    theirs = _run(source, script, server)
    assert theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    ours = _run(rewritten(source), script, server)
    assert "google" not in rewritten(source)
    return theirs, ours


def assert_same(theirs: dict[str, Any], ours: dict[str, Any]) -> None:
    for key in ("did", "events", "shots", "tools", "gemini_tools", "requests", "life", "unused_answers"):
        assert ours[key] == theirs[key], key


SCRIPT = [
    calls(("click_at", {"x": 500, "y": 250})),
    calls(("type_text_at", {"x": 100, "y": 999, "text": "hi", "press_enter": False}),
          ("drag_and_drop", {"x": 0, "y": 0, "destination_x": 1000, "destination_y": 500})),
    calls(("navigate", {"url": "http://127.0.0.1/admin"})),
    calls(("wait_5_seconds", {}), ("key_combination", {"keys": ["Control", "a"]})),
    gemini_response("Pressed."),
]


def test_a_gemini_2_computer_use_run_is_google_adks(gemini: StubServer) -> None:
    theirs, ours = both(SCRIPT, gemini)
    # what google-adk does, so that the comparison compares something
    assert theirs["did"] == [["click_at", 640, 180], ["type_text_at", 128, 719, "hi", False, True],
                             ["drag_and_drop", 0, 0, 1279, 360], ["current_state"], ["wait", 5],
                             ["key_combination", ["Control", "a"]]]
    assert theirs["shots"][1] == [("click_at", [("image/png", b"PNG-1")])]
    refused = next(row for row in theirs["events"] if row["responses"] and row["responses"][0][1] == "navigate")
    assert refused["responses"][0][2]["url"] == "https://example.com/start" and "error" in refused["responses"][0][2]
    assert theirs["gemini_tools"][0] == {"tools": [{"computerUse": {"environment": "ENVIRONMENT_BROWSER"}}],
                                         "instruction": False}
    assert all(not row["tools"] for row in theirs["requests"])  # no function is declared
    second = theirs["requests"][1]["contents"][-1]["parts"][0]["functionResponse"]
    assert second["response"] == {"url": "https://example.com/start"}
    assert second["parts"] == [{"inline_data": {"mime_type": "image/png",  # as google-genai sends it
                                                "data": base64.b64encode(b"PNG-1").decode()}}]
    assert theirs["life"] == ["initialize", "close"]
    assert_same(theirs, ours)


def test_gemini_3_actions_and_exclusions_are_google_adks(gemini: StubServer) -> None:
    script = [calls(("click", {"x": 10, "y": 20}), ("type", {"text": "go"}), ("press_key", {"key": "Enter"})),
              calls(("scroll", {"x": 500, "y": 500, "direction": "up"}), ("take_screenshot", {})),
              gemini_response("Done.")]
    theirs, ours = both(script, gemini, model="gemini-3-pro-preview", excluded=["hover_at", "search"])
    assert theirs["did"][:2] == [["click_at", 12, 14], ["key_combination", ["g"]]]
    entry = theirs["gemini_tools"][0]["tools"][0]["computerUse"]
    # in Gemini 3's vocabulary, with the optional actions the computer lacks
    assert entry["excluded_predefined_functions"][:3] == ["move", "search", "double_click"]
    assert "hover_at" not in [name for name, _ in theirs["tools"]]
    assert_same(theirs, ours)


SAFETY = calls(("click_at", {"x": 1, "y": 2, "safety_decision": {
    "decision": "require_confirmation", "explanation": "Accept the cookies?"}}))


def test_a_safety_confirmation_is_asked_as_google_adk_asks_it(gemini: StubServer) -> None:
    theirs, ours = both([SAFETY], gemini)
    assert theirs["did"] == []
    asked = [c for row in theirs["events"] for c in row["calls"] if c[1] == "adk_request_confirmation"]
    assert asked and asked[0][2]["toolConfirmation"]["hint"] == "Accept the cookies?"
    assert_same(theirs, ours)


@pytest.mark.parametrize("confirmed", [True, False])
def test_a_confirmed_action_runs_and_a_rejected_one_does_not(gemini: StubServer, confirmed: bool) -> None:
    theirs, ours = both([SAFETY, gemini_response("Done.")], gemini, answer={"confirmed": confirmed})
    answered = [r for row in theirs["events"] for r in row["responses"] if r[1] == "click_at"][-1][2]
    if confirmed:
        assert theirs["did"] == [["click_at", 1, 1]]
        assert answered == {"url": "https://example.com/start", "safety_acknowledgement": "true"}
    else:
        assert theirs["did"] == [] and "error" in answered
    assert_same(theirs, ours)


@pytest.mark.parametrize("url", ["http://localhost:8080/", "http://metadata.goog/", "http://db.internal/",
                                 "http://10.0.0.1/", "http://[::ffff:127.0.0.1]/", "http://169.254.169.254/",
                                 "file:///etc/passwd", "http://169.254.169.254\\@example.com/", "http://x:99999/"])
def test_navigate_refuses_what_is_not_on_the_public_internet(url: str) -> None:
    import asyncio

    from adk_actors.tools.computer_use._guards import refusal

    assert asyncio.run(refusal(url, private_allowed=False)) is not None
    # allowed private hosts: only the form is checked
    form_only = asyncio.run(refusal(url, private_allowed=True))
    assert (form_only is None) == (url.startswith("http://") and "\\" not in url and "99999" not in url)


# -- a real browser ----------------------------------------------------------------------

PAGE = b"""<!doctype html><html><body style="margin:0;background:#fff">
<button id="b" style="position:absolute;left:100px;top:100px;width:200px;height:100px;font-size:30px"
 onclick="document.body.style.background='#00ff00';this.textContent='pressed'">press</button>
</body></html>"""


@pytest.fixture
def page_url() -> Iterator[str]:
    """The page, served on a free loopback port while the test lasts."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


BROWSER_PROGRAM = '''
from playwright.async_api import async_playwright

from adk_actors import types
from adk_actors.agents import Agent
from adk_actors.runners import InMemoryRunner
from adk_actors.tools.computer_use import BaseComputer, ComputerEnvironment, ComputerState, ComputerUseToolset


class PlaywrightComputer(BaseComputer):
    """Chromium through Playwright, a 400 x 300 viewport."""

    def __init__(self, executable, start):
        self.executable, self.start, self.page = executable, start, None

    async def initialize(self):
        self.playwright = await async_playwright().start()
        self.browser = await self.playwright.chromium.launch(executable_path=self.executable, args=["--no-sandbox"])
        self.page = await self.browser.new_page(viewport={"width": 400, "height": 300})
        await self.page.goto(self.start)

    async def close(self):
        await self.browser.close()
        await self.playwright.stop()

    async def screen_size(self):
        return (400, 300)

    async def environment(self):
        return ComputerEnvironment.ENVIRONMENT_BROWSER

    async def current_state(self):
        return ComputerState(screenshot=await self.page.screenshot(type="png"), url=self.page.url)

    async def click_at(self, x: int, y: int) -> ComputerState:
        await self.page.mouse.click(x, y)
        return await self.current_state()

    async def open_web_browser(self): return await self.current_state()
    async def hover_at(self, x: int, y: int): return await self.current_state()
    async def type_text_at(self, x: int, y: int, text: str, press_enter: bool = True,
                           clear_before_typing: bool = True): return await self.current_state()
    async def scroll_document(self, direction: str): return await self.current_state()
    async def scroll_at(self, x: int, y: int, direction: str, magnitude: int): return await self.current_state()
    async def wait(self, seconds: int): return await self.current_state()
    async def go_back(self): return await self.current_state()
    async def go_forward(self): return await self.current_state()
    async def search(self): return await self.current_state()
    async def navigate(self, url: str): return await self.current_state()
    async def key_combination(self, keys: list[str]): return await self.current_state()
    async def drag_and_drop(self, x: int, y: int, destination_x: int, destination_y: int):
        return await self.current_state()


async def main(executable, start):
    computer = PlaywrightComputer(executable, start)
    agent = Agent(name="browser", model="gemini-2.5-computer-use-preview-10-2025", instruction="Use the browser.",
                  tools=[ComputerUseToolset(computer=computer)])
    runner = InMemoryRunner(agent=agent, app_name="cu")
    session = await runner.session_service.create_session(app_name="cu", user_id="ann")
    message = types.Content(role="user", parts=[types.Part(text="press the button")])
    events = [e async for e in runner.run_async(user_id="ann", session_id=session.id, new_message=message)]
    text = await computer.page.inner_text("#b")
    color = await computer.page.evaluate("getComputedStyle(document.body).backgroundColor")
    await runner.close()
    return {"events": events, "text": text, "color": color}
'''


def _pixel(png: bytes, x: int, y: int) -> tuple[int, ...]:
    """The RGB of pixel (x, y) of a PNG Chromium made (8-bit RGB or RGBA, non-interlaced)."""
    import struct
    import zlib

    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    offset, width, channels, data = 8, 0, 0, b""
    while offset < len(png):
        length, kind = struct.unpack(">I4s", png[offset:offset + 8])
        chunk = png[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            width, _, depth, color = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and color in (2, 6)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            data += chunk
        offset += 12 + length
    raw, stride, rows = zlib.decompress(data), width * channels, []
    previous = bytearray(stride)
    for row in range(y + 1):
        kind, line = raw[row * (stride + 1)], bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(line)
        previous = line
    return tuple(rows[y][x * channels:x * channels + 3])


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")
def test_a_model_clicks_a_button_in_chromium_and_sees_the_result(gemini: StubServer, page_url: str) -> None:
    pytest.importorskip("playwright")
    # the button is at 100..300 x 100..200 of a 400 x 300 screen: (500, 500) of the model's grid is (200, 150)
    script = [calls(("click_at", {"x": 500, "y": 500})), gemini_response("Pressed.")]
    _, result = run_program(BROWSER_PROGRAM, script, gemini, CHROMIUM, page_url)
    assert result["text"] == "pressed" and result["color"] == "rgb(0, 255, 0)"
    response = next(r for e in result["events"] for r in e.get_function_responses())
    assert response.name == "click_at" and response.response == {"url": page_url}
    after = gemini.requests[1].body["contents"][-1]["parts"][0]["functionResponse"]
    assert after["response"] == {"url": page_url}
    [image] = after["parts"]
    assert image["inline_data"]["mime_type"] == "image/png"
    png = base64.urlsafe_b64decode(image["inline_data"]["data"])
    assert _pixel(png, 10, 10) == (0, 255, 0)  # the screenshot the model gets shows the page after the click
    assert gemini.requests[0].body["tools"] == [{"computerUse": {"environment": "ENVIRONMENT_BROWSER"}}]
