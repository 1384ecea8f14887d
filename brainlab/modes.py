"""Re-export shim: session modes moved to :mod:`brainlab.spec.modes`.

Kept for ``sources/claude_marks.py``, a transcript module other branches are editing this
round; new code imports ``brainlab.spec.modes``.
"""

from brainlab.spec.modes import *  # noqa: F403
from brainlab.spec.modes import REDIRECTION_HINTS, REDIRECTION_PATTERNS  # noqa: F401
