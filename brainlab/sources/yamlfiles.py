"""Shared loading of one YAML mapping per file, with the error line when it is broken."""

from __future__ import annotations

import yaml

from brainlab.sources.base import Parsed, decode_text
from brainlab.sources.messages import said
from brainlab.sources.safeyaml import load_yaml
from brainlab.sources.text import yaml_error_line, yaml_reason


def load_mapping(data: bytes, parsed: Parsed) -> dict | None:
    """Decode and parse a YAML file that must hold one mapping; problems become error rows."""
    text = decode_text(data, parsed)
    if text is None:
        return None
    try:
        doc = load_yaml(text)
    except yaml.YAMLError as exc:
        parsed.error(yaml_error_line(exc), said("invalid YAML: {}", yaml_reason(exc)))
        return None
    if not isinstance(doc, dict):
        parsed.error(None, said("file does not hold a YAML mapping"))
        return None
    return doc
