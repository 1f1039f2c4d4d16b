from google.adk.agents import Agent

billing = Agent(model="gemini-2.0-flash", name="billing", description="Answers billing questions.",
                instruction="You handle billing.")
support = Agent(model="gemini-2.0-flash", name="support", description="Answers technical questions.",
                instruction="You handle technical support.")

root_agent = Agent(
    model="gemini-2.0-flash",
    name="front_desk",
    instruction="Send billing questions to billing and technical ones to support.",
    sub_agents=[billing, support],
)

TURNS = ["Why was I charged twice?", "And when is the refund?"]
REPLIES = [{"call": "transfer_to_agent", "args": {"agent_name": "billing"}}, "I see two charges; one is refunded.",
           "Within five days."]
