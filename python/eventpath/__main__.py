"""``python -m eventpath``: the command line."""

import sys

from eventpath.cli import main

sys.exit(main())
