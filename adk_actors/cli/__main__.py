"""``python -m adk_actors.cli``: the ``adk-actors`` command."""

import sys

from . import main

sys.exit(main())
