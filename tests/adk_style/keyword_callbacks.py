from google.adk import Agent


def before_model(*, callback_context, llm_request):
    callback_context.state["model_calls"] = callback_context.state.get("model_calls", 0) + 1


def after_tool(*, tool, args, tool_context, tool_response):
    tool_context.state["last_tool"] = tool.name
    return {"total": tool_response * 2}


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
      a: The first number.
      b: The second number.
    """
    return a + b


root_agent = Agent(model="gemini-2.0-flash", name="adder", instruction="Add numbers with the tool.",
                   tools=[add], before_model_callback=before_model, after_tool_callback=after_tool)

TURNS = ["What is 2 + 3?"]
REPLIES = [{"call": "add", "args": {"a": 2, "b": 3}}, "It is 10 after doubling."]
