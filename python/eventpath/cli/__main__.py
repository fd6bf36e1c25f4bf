"""``python -m eventpath.cli``: the ``eventpath`` command (the tests run it so)."""

import sys

from eventpath.cli import main

sys.exit(main())
