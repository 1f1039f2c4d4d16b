"""google-adk's ``google.adk.integrations`` path: model providers outside the core
(``integrations.openai``)."""
