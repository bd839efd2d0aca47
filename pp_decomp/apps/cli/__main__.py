"""``python -m pp_decomp.apps.cli``."""

import sys

from pp_decomp.apps.cli import main

if __name__ == "__main__":
    sys.exit(main())
