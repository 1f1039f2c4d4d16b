"""google-adk's ``google.adk.utils`` helpers at the same paths (issue 52).

Each module is one of google-adk's, with its public names, signatures and defaults;
where the project already has the rule (the compiler's instruction templating, the
model-name checks, the YAML loader) the module calls it instead of holding a second
copy. Modules: ``instructions_utils``, ``content_utils``, ``env_utils``,
``feature_decorator``, ``model_name_utils``, ``yaml_utils``; and the internals user
code imports: ``agent_info``, ``context_utils``, ``output_schema_utils``,
``streaming_utils``, ``cache_performance_analyzer``, ``variant_utils``,
``vertex_ai_utils``.
"""
