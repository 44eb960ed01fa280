"""``python -m jungle_cli``: the ``jungle`` command, for where the script is not on PATH."""

import sys

from jungle_cli import main

sys.exit(main())
