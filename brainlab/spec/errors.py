"""The two exception classes the spec layer raises; brainlab.common.errors re-exports them.

The spec layer imports nothing of brainlab, so the root of the hierarchy lives here and
:mod:`brainlab.common.errors` builds the rest of it on top (``except ConfigError`` works from
either module: it is the same class).
"""


class BrainlabError(Exception):
    """Base class of every error brainlab raises on purpose."""


class ConfigError(BrainlabError):
    """A configuration file or a rule/threshold override is invalid."""
