"""Accelerations, kept beside the reference core (``docs/design.md``).

Each module here makes something the reference core already does faster, and plugs in through a small,
named hook; the reference code never needs it to be right.  ``AUTODIFF_REFERENCE=1`` in the environment,
read once at import, switches every acceleration off at once, so the reference core runs alone (CI runs the
suite both ways).

>>> isinstance(REFERENCE, bool)
True
"""

import os

REFERENCE = os.environ.get("AUTODIFF_REFERENCE", "") == "1"
