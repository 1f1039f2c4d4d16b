"""google-adk's ``google.adk.integrations`` path: model providers outside the core
(``integrations.openai``) and other frameworks' tools (``integrations.langchain``,
``integrations.crewai``, each on its optional extra)."""
