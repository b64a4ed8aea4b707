"""Only the command line imports the command line: everything else is a library the commands use.

A module outside ``dlsched/commands/`` that imports ``dlsched.commands`` or ``dlsched.cli`` would
tie a library user (the Python API, experiment files, the live runtime) to argparse namespaces.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "dlsched"
FORBIDDEN = ("dlsched.commands", "dlsched.cli")


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def test_no_module_outside_commands_imports_commands_or_cli():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "commands" or rel.name == "cli.py":
            continue
        for line, name in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if _forbidden(name):
                bad.append(f"{rel}:{line} imports {name}")
    assert not bad, "\n".join(bad)


def test_the_scan_sees_function_level_imports():
    tree = ast.parse("def f():\n    from dlsched.commands import _common\n    import dlsched.cli\n")
    assert [n for _, n in _imports(tree) if _forbidden(n)] == ["dlsched.commands", "dlsched.commands._common",
                                                               "dlsched.cli"]
    assert not _forbidden("dlsched.commandsx")
