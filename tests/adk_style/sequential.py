from google.adk.agents import LlmAgent, SequentialAgent

writer = LlmAgent(model="gemini-2.0-flash", name="writer", instruction="Write a one-line poem about the topic.",
                  output_key="draft")
reviewer = LlmAgent(model="gemini-2.0-flash", name="reviewer",
                    instruction="Review this poem: {draft}", output_key="review")

root_agent = SequentialAgent(name="poem_pipeline", sub_agents=[writer, reviewer])

TURNS = ["the sea"]
REPLIES = ["The sea sings softly.", "Good rhythm; keep it."]
