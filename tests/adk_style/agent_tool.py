from google.adk.agents import Agent
from google.adk.tools.agent_tool import AgentTool

summarizer = Agent(model="gemini-2.0-flash", name="summarizer", description="Summarizes a text.",
                   instruction="Summarize the text in five words.")

root_agent = Agent(model="gemini-2.0-flash", name="reader", instruction="Use the summarizer for long texts.",
                   tools=[AgentTool(agent=summarizer)])

TURNS = ["Summarize: the quick brown fox jumps over the lazy dog many times"]
REPLIES = [{"call": "summarizer", "args": {"request": "the quick brown fox jumps over the lazy dog many times"}},
           "Fox jumps over dog repeatedly.", "Summary: fox jumps over dog repeatedly."]
