"""YAML from brain files, bounded: an alias bomb fails its file in milliseconds (issue 10 §3).

PyYAML shares the node of an alias instead of copying it, so a 400-byte "billion laughs"
document loads at once; what explodes is everything afterwards that walks it as a tree
(``str``, ``json.dumps``, Arrow). :func:`load_yaml` composes the node graph, counts the values
the document would expand to when walked as a tree (each shared node counted once per use,
memoised, so the count itself is linear in the graph) and refuses a document above
:data:`MAX_VALUES` or one that contains itself. Values PyYAML cannot build (a date such as
``2026-02-30``, nesting deeper than Python's stack) are YAML errors too, never crashes.
"""

from __future__ import annotations

import yaml

MAX_VALUES = 100_000  # scalars, lists and mappings one file may expand to (a big claim has ~50)


class YamlBoundError(yaml.YAMLError):
    """The document is valid YAML but expands beyond the bound, or into itself."""


def load_yaml(text: str):
    """``yaml.safe_load`` with the expansion bound; every failure is a ``yaml.YAMLError``."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded_size(node)
        return loader.construct_document(node)
    except yaml.YAMLError:
        raise
    except RecursionError:
        raise YamlBoundError("YAML nested too deeply to load") from None
    except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
        raise yaml.YAMLError(f"invalid YAML value ({type(exc).__name__}: {exc})") from None
    finally:
        loader.dispose()


def expanded_size(root: yaml.Node, limit: int = MAX_VALUES) -> int:
    """How many values ``root`` expands to as a tree; YamlBoundError above ``limit`` or on a cycle.

    Iterative post-order walk (deep documents cannot overflow the stack), memoised by node.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            if total > limit:
                raise YamlBoundError(f"YAML expands to more than {limit:,} values (an alias "
                                     "bomb?): not loaded")
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YamlBoundError("YAML alias refers to itself (a recursive document): not loaded")
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise YamlBoundError("YAML alias refers to itself (a recursive document): "
                                     "not loaded")
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []
