"""``python -m adk_actors.http``: the HTTP server process a host's ``http`` actor starts."""

import sys

from ._process import main

sys.exit(main())
