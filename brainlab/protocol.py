"""Re-export shim: the protocol vocabulary moved to :mod:`brainlab.spec.vocabulary`.

Kept for ``sources/claude_marks.py``, a transcript module other branches are editing this
round; new code imports ``brainlab.spec.vocabulary``.
"""

from brainlab.spec.vocabulary import *  # noqa: F403
from brainlab.spec.vocabulary import parse_session_keywords  # noqa: F401
