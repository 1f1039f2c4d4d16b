from google.adk.agents import LlmAgent
from pydantic import BaseModel, Field


class Capital(BaseModel):
    country: str = Field(description="The country.")
    capital: str = Field(description="Its capital.")


root_agent = LlmAgent(
    model="gemini-2.0-flash",
    name="capitals",
    instruction="Give the capital of the country the user names, as JSON.",
    output_schema=Capital,
    output_key="capital",
)

TURNS = ["France"]
REPLIES = ['{"country": "France", "capital": "Paris"}']
