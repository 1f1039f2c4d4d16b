from google.adk.agents import LlmAgent, SequentialAgent

extractor = LlmAgent(model="gemini-2.0-flash", name="extractor", instruction="Extract the city the user names.",
                     output_key="city")
describer = LlmAgent(model="gemini-2.0-flash", name="describer", include_contents="none",
                     instruction="Describe {city} in one sentence.", output_key="description")

root_agent = SequentialAgent(name="city_guide", sub_agents=[extractor, describer])

TURNS = ["I am going to Lisbon next week"]
REPLIES = ["Lisbon", "Lisbon is a hilly coastal city."]
