"""An agent given google-adk's ``LiteLlm``, for a host's run workers
(tests/test_lite_llm.py): the worker imports this module by its path, and reads the
stand-in's address and the key from the environment the test set before the fork."""

import os

from adk_actors.agents import LlmAgent
from adk_actors.models.lite_llm import LiteLlm

#: the key's variable is named so that no secret-name rule catches it: only LiteLlm's
#: own api_key handling keeps it out of events and logs
litellm_agent = LlmAgent(name="litellm_instance", instruction="Answer briefly.",
                         model=LiteLlm(model="openai/gpt-4o-mini",
                                       api_base=os.environ.get("LITELLM_TEST_BASE", "http://127.0.0.1:9/v1"),
                                       api_key=os.environ.get("LITELLM_TEST_CREDENTIAL", "unset")))
