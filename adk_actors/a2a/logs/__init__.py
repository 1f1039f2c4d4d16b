"""google-adk's ``a2a.logs``: readable log text of A2A requests and responses (:mod:`.log_utils`)."""
