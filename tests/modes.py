"""The suite's mode, read from the environment as autodiff reads it at import: ``AUTODIFF_REFERENCE=1`` runs the
reference core alone, every acceleration off (docs/design.md; CI runs the suite both ways).

>>> isinstance(REFERENCE, bool)
True
"""

import os

REFERENCE = os.environ.get("AUTODIFF_REFERENCE", "") == "1"
