"""YAML input with errors that name the file, the line and the field.

Cluster specs and live job files are both YAML validated by pydantic; this
module is the one place that reads them, so both report problems alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from dlsched.errors import InputError
from dlsched.inputfile import read_head

M = TypeVar("M", bound=BaseModel)


def line_of(node: yaml.Node | None, loc: tuple) -> int | None:
    """Line (1-based) of the YAML node at a pydantic error location (the deepest one found)."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if k.value == key), None)
            if nxt is None:
                nxt = next((k for k, v in node.value if k.value == key), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            nxt = node.value[key]
        else:
            nxt = None
        if nxt is None:
            break
        node = nxt
        line = node.start_mark.line + 1
    return line


def load_yaml(text: str, source: str, expect: str) -> tuple[yaml.Node | None, dict]:
    """Parse YAML text into (node tree for line lookup, data); the data must be a mapping.

    ``expect`` completes the error when it is not one: "a <expect>".
    """
    _check_shape(text, source)
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(f"malformed YAML: {getattr(e, 'problem', e)}", file=source,
                         line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise InputError(expect, file=source, line=1)
    _no_duplicate_keys(root, source)
    return root, data


_MAX_NODES = 200_000
MAX_DEPTH = 64  # far past any spec, job or experiment file; PyYAML's parser recurses per level
MAX_BYTES = 16 * 2**20

_OPEN = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken, yaml.FlowMappingStartToken,
         yaml.FlowSequenceStartToken)
_CLOSE = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)


def _check_shape(text: str, source: str) -> None:
    """Refuse a document too large or nested too deep before the recursive parser sees it.

    The scanner is iterative, so counting its open and close tokens finds the depth without
    the ``RecursionError`` that composing ~900 nested levels would raise.
    """
    if len(text) > MAX_BYTES:
        raise InputError(f"YAML file of {len(text):,} characters; the limit is {MAX_BYTES:,}", file=source)
    depth = 0
    try:
        for token in yaml.scan(text):
            if isinstance(token, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    raise InputError(f"nested more than {MAX_DEPTH} levels deep", file=source,
                                     line=token.start_mark.line + 1)
            elif isinstance(token, _CLOSE):
                depth -= 1
    except yaml.YAMLError:
        return  # malformed: composing reports it with its line


def _no_duplicate_keys(node: yaml.Node | None, source: str) -> None:
    """Raise at the second occurrence of a key in any mapping (PyYAML would keep the last silently).

    Also refuses an alias that contains itself (``&a [*a]``): the data would be infinitely deep.
    """
    stack = [(node, frozenset())] if node is not None else []
    visits = 0
    while stack:
        n, inside = stack.pop()
        visits += 1
        if visits > _MAX_NODES:  # aliases of aliases can multiply a small file into a huge one
            raise InputError(f"more than {_MAX_NODES} YAML values once aliases are expanded", file=source)
        if id(n) in inside:
            raise InputError("a YAML alias refers to a node that contains it (infinitely deep data)",
                             file=source, line=n.start_mark.line + 1)
        inside = inside | {id(n)}
        if isinstance(n, yaml.MappingNode):
            seen: dict = {}
            for k, v in n.value:
                if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                    if k.value in seen:
                        raise InputError(f"duplicate key '{k.value}' (first on line {seen[k.value]})", file=source,
                                         line=k.start_mark.line + 1, field=str(k.value))
                    seen[k.value] = k.start_mark.line + 1
                stack.append((v, inside))
        elif isinstance(n, yaml.SequenceNode):
            stack.extend((v, inside) for v in n.value)


def read_yaml_file(path: Path, source: str | None = None) -> str:
    """A YAML file's text; missing files, directories and non-UTF-8 bytes are ``InputError``s."""
    source = str(path) if source is None else source
    read_head(path, source, "YAML file")
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte 0x{raw[e.start]:02x}); re-encode the file as UTF-8", file=source,
                         line=raw.count(b"\n", 0, e.start) + 1) from None


def validate(schema: type[M], data: dict, root: yaml.Node | None, source: str) -> M:
    """``schema.model_validate(data)``, its first error turned into an InputError at its line."""
    try:
        return schema.model_validate(data)
    except ValidationError as e:
        errors = e.errors()
        loc = tuple(errors[0]["loc"])
        msg = errors[0]["msg"].removeprefix("Value error, ")
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise InputError(msg + more, file=source, line=line_of(root, loc),
                         field=".".join(str(p) for p in loc) or None) from None
