"""google-adk's ``google.adk.cli.utils`` modules that a custom server or a service
plug-in imports: :mod:`.agent_loader` (``AgentLoader``), :mod:`.base_agent_loader`,
:mod:`.envs` (``load_dotenv_for_agent``) and :mod:`.service_factory` (the
``create_*_service_from_options`` functions on :mod:`adk_actors.cli.service_registry`)."""
