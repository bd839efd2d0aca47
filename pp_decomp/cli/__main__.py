"""``python -m pp_decomp.cli``."""

import sys

from pp_decomp.cli import main

if __name__ == "__main__":
    sys.exit(main())
