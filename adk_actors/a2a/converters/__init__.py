"""google-adk's ``a2a.converters``: between a2a-sdk's objects (parts, messages,
tasks, status and artifact updates) and our parts and events, at google-adk's paths
and with its rules (:mod:`.part_converter`, :mod:`.to_adk_event`,
:mod:`.from_adk_event`, :mod:`.event_converter`, :mod:`.long_running_functions`,
:mod:`.request_converter`). The rules our own A2A server and ``RemoteA2aAgent``
share with them live in :mod:`adk_actors.agents._a2a_parts`."""
