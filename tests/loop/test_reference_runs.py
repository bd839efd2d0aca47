"""Every reference run makes exactly the stored choices (``tests/loop/reference/``).

The stored choices were made by earlier code; a refactoring must leave them
unchanged. A change that is meant to alter choices regenerates them with
``python tests/loop/reference/runs.py KEY ...`` and says so in its commit message.
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent / "reference"))
import runs  # noqa: E402

STORED = json.loads(runs.CHOICES.read_text())


@pytest.mark.parametrize("key", [r[0] for r in runs.RUNS])
def test_reference_run_makes_the_stored_choices(key):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen = runs.run(key)
    np.testing.assert_array_equal(np.asarray(chosen), np.asarray(STORED[key]))
