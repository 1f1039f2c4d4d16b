from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.genai import types


def add_house_rules(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
    llm_request.append_instructions(["Always be brief."])
    current = llm_request.config.system_instruction or ""
    if isinstance(current, types.Content):
        current = "\n".join(part.text or "" for part in current.parts or [])
    llm_request.config.system_instruction = types.Content(
        parts=[types.Part(text="House rule: answer in French.\n" + current)])
    llm_request.config.temperature = 0.0
    llm_request.contents.append(types.UserContent(parts=[types.Part(text="(one word, please)")]))
    callback_context.state["rewritten"] = callback_context.state.get("rewritten", 0) + 1


root_agent = LlmAgent(
    model="gemini-2.0-flash",
    name="rewriter",
    instruction="You greet people.",
    generate_content_config=types.GenerateContentConfig(temperature=0.9),
    before_model_callback=add_house_rules,
)

TURNS = ["Say hello", "Say goodbye"]
REPLIES = [
    [{"echo": "instruction", "has": "House rule: answer in French."}, {"echo": "instruction", "has": "You greet people."},
     {"echo": "instruction", "has": "Always be brief."}, {"echo": "config", "key": "temperature"}, {"echo": "last"}],
    "Au revoir.",
]
