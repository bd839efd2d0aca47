"""``python -m pp_decomp.cli``."""

import sys

from pp_decomp.cli import main

sys.exit(main())
