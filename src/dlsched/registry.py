"""One registry type for everything a user names on the command line: job policies, communication
policies, trace readers, perf models and clusters.

A name resolves, in order, to
* a built-in: declared as ``"module:attr"`` (or as a module whose import registers the name), so a
  lookup imports only the module it needs and start-up imports none;
* a plugin installed by another distribution, through the Python entry-point group
  ``dlsched.<kind>`` (``dlsched.policies``, ``dlsched.comm_policies``, ``dlsched.readers``,
  ``dlsched.perf_models``, ``dlsched.clusters``);
* a reference given where a name is expected: ``path/to/file.py:Attr`` (a file outside any
  package) or ``package.module:Attr`` (anything importable).

Every resolved entry keeps its ``source``: how to load it again, which provenance records so a
run that used a plugin can be re-run.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Generic, TypeVar

from dlsched.errors import InputError, UnknownNameError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Entry:
    """A resolved name: what it is, and how to load it again."""

    name: str      # what the user wrote (a built-in name, an entry-point name, or a reference)
    label: str     # a short name for tables and directories (the attribute's name for a reference)
    origin: str    # "built-in", "entry point", "file" or "module"
    source: str    # how to load it: "module:attr", "/abs/file.py:Attr", or "dist==ver: module:attr"


def is_reference(text: str) -> bool:
    """``file.py:Attr``, ``file.py`` or ``package.module:Attr``: something to load, not a name."""
    if text.endswith(".py"):
        return True
    head, sep, attr = text.rpartition(":")
    return bool(sep and head and attr.isidentifier())


def _module_name_for(path: Path) -> str:
    # one module per file, whatever name it is reached by; stable across runs (sha of the path)
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"dlsched_plugin_{stem}_{digest}"


def load_file(path: Path, field_name: str | None):
    """Import a Python file outside any package as a module (once per file per process)."""
    path = path.resolve()
    name = _module_name_for(path)
    if name in sys.modules:
        return sys.modules[name]
    if not path.is_file():
        raise InputError("no such plugin file" if not path.exists() else "not a regular file",
                         file=str(path), field=field_name)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError("cannot be imported as Python", file=str(path), field=field_name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        del sys.modules[name]
        raise InputError(f"syntax error: {e.msg}", file=str(path), line=e.lineno, field=field_name) from None
    except Exception as e:  # a plugin's own bug, reported where it is rather than as our traceback
        del sys.modules[name]
        raise InputError(f"importing it failed: {type(e).__name__}: {e}", file=str(path),
                         line=_line_in(e, path), field=field_name) from None
    return module


def _line_in(exc: BaseException, path: Path) -> int | None:
    tb, line = exc.__traceback__, None
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


_ALL: list["Registry"] = []


def loaded_plugins() -> list[dict]:
    """Every plugin resolved in this process, with how to load it again (provenance.json)."""
    rows = []
    for reg in _ALL:
        for entry in reg._entries.values():
            if entry.origin != "built-in":
                row = {"kind": reg.kind, "name": entry.name, "origin": entry.origin, "source": entry.source}
                if entry.origin == "file":
                    path = Path(entry.source.rpartition(":")[0])
                    row["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
                rows.append(row)
    return sorted(rows, key=lambda r: (r["kind"], r["name"]))


@dataclass
class Registry(Generic[T]):
    """Named objects of one kind; see the module docstring for how a name resolves.

    ``check(obj)`` returns None for an object of the right kind, else why not; it guards plugins,
    whose mistakes must read as input errors naming the file, not as tracebacks mid-run.
    ``pick(module)`` chooses the object of a ``file.py`` reference given without ``:Attr``.
    """

    kind: str                 # "policy", "communication policy", ...
    group: str                # entry-point group
    field: str                # the CLI flag errors name
    check: Callable[[object], str | None] = lambda obj: None
    pick: Callable[[object], list[str]] | None = None
    discover: Callable[[], dict[str, str]] | None = None  # every built-in name -> its target (listing)
    locate: Callable[[str], str | None] | None = None      # one built-in name -> its target (cheaper)
    _builtins: dict[str, str] = field(default_factory=dict)       # name -> "module:attr" or "module"

    _summaries: dict[str, str] = field(default_factory=dict)
    _objects: dict[str, T] = field(default_factory=dict)
    _entries: dict[str, Entry] = field(default_factory=dict)
    _plugins: dict[str, object] | None = None  # entry-point name -> EntryPoint, read once

    def __post_init__(self) -> None:
        _ALL.append(self)

    # ------------------------------------------------------------ declaring
    def add(self, name: str, target, summary: str = "") -> None:
        """A built-in: ``"module:attr"`` (imported on first use), or the object itself."""
        if isinstance(target, str):
            self._builtins[name] = target
        else:
            self._objects[name] = target
            where = getattr(target, "__module__", None) or getattr(getattr(target, "func", None), "__module__", "?")
            self._entries[name] = Entry(name, name, "built-in", f"{where}:{name}")
        if summary:
            self._summaries[name] = summary

    def register(self, name: str):
        """Decorator: the decorated object is the built-in ``name`` (its module was imported)."""
        def deco(obj):
            self._objects[name] = obj
            self._entries[name] = Entry(name, name, "built-in", f"{obj.__module__}:{obj.__qualname__}")
            return obj
        return deco

    def summary(self, name: str) -> str:
        return self._summaries.get(name, "")

    # ------------------------------------------------------------ listing
    def _builtin_targets(self) -> dict[str, str]:
        if self.discover is not None:
            for name, module in self.discover().items():
                self._builtins.setdefault(name, module)
        return self._builtins

    def builtin_names(self) -> list[str]:
        return sorted(set(self._builtin_targets()) | {n for n, e in self._entries.items() if e.origin == "built-in"})

    def plugins(self) -> dict[str, object]:
        """Entry points of this registry's group, by name (a built-in name is never shadowed)."""
        if self._plugins is None:
            from importlib.metadata import entry_points

            found = {}
            for ep in sorted(entry_points(group=self.group), key=lambda ep: (ep.name, ep.value)):
                found.setdefault(ep.name, ep)
            self._plugins = found
        return self._plugins

    def names(self) -> list[str]:
        """Every name this registry answers to: built-ins, then installed plugins."""
        builtins = self.builtin_names()
        return builtins + sorted(n for n in self.plugins() if n not in builtins)

    def forget_plugins(self) -> None:
        """Read the entry points again on next use (after installing one in the same process)."""
        self._plugins = None
        for name in [n for n, e in self._entries.items() if e.origin == "entry point"]:
            del self._entries[name]
            self._objects.pop(name, None)

    # ------------------------------------------------------------ resolving
    def get(self, name: str) -> T:
        self._resolve(name)
        return self._objects[name]

    def entry(self, name: str) -> Entry:
        self._resolve(name)
        return self._entries[name]

    def __contains__(self, name: str) -> bool:
        try:
            self._resolve(name)
        except InputError:
            return False
        return True

    def _resolve(self, name: str) -> None:
        if name in self._objects:
            return
        target = self._builtins.get(name) or (self.locate(name) if self.locate else None)
        if target is None and self.discover is not None and not is_reference(name):
            target = self._builtin_targets().get(name)
        if target is not None:
            self._load_builtin(name, target)
        elif name in self.plugins():
            ep = self.plugins()[name]
            try:
                obj = ep.load()
            except Exception as e:
                raise InputError(f"{self.kind} plugin '{name}' ({ep.value}) failed to load: "
                                 f"{type(e).__name__}: {e}", field=self.field) from None
            dist = getattr(ep, "dist", None)
            where = f"{dist.name}=={dist.version}: " if dist is not None else ""
            self._accept(name, obj, Entry(name, name, "entry point", f"{where}{ep.value}"))
        elif is_reference(name):
            self._load_reference(name)
        else:
            raise UnknownNameError(self.kind, name, self.names(), field=self.field)

    def _load_builtin(self, name: str, target: str) -> None:
        module, _, attr = target.partition(":")
        importlib.import_module(module)  # an ImportError here is our bug: never hidden
        if attr:
            obj = getattr(sys.modules[module], attr)
            self._objects[name] = obj
            self._entries[name] = Entry(name, name, "built-in", target)
        elif name not in self._objects:
            raise LookupError(f"module {module} was expected to register {self.kind} '{name}'")

    def _load_reference(self, ref: str) -> None:
        head, sep, attr = ref.rpartition(":") if not ref.endswith(".py") else (ref, "", "")
        if head.endswith(".py"):
            path = Path(head).expanduser()
            module = load_file(path, self.field)
            origin, where = "file", str(path.resolve())
        else:
            try:
                module = importlib.import_module(head)
            except ImportError as e:
                raise InputError(f"cannot import module '{head}' for {self.kind} '{ref}': {e}",
                                 field=self.field) from None
            origin, where = "module", head
        if not sep:
            found = self.pick(module) if self.pick else []
            if len(found) != 1:
                what = "none" if not found else ", ".join(found)
                raise InputError(f"name the {self.kind} to use as {head}:NAME (found {what})",
                                 file=where if origin == "file" else None, field=self.field)
            attr = found[0]
        if not hasattr(module, attr):
            known = sorted(a for a in vars(module) if not a.startswith("_"))
            raise UnknownNameError(f"attribute of {where}", attr, known, field=self.field)
        obj = getattr(module, attr)
        own = getattr(obj, "name", None)  # a policy's own short name labels its rows and directories
        label = own if isinstance(own, str) and own and "/" not in own and own != "?" else attr
        self._accept(ref, obj, Entry(ref, label, origin, f"{where}:{attr}"))

    def _accept(self, name: str, obj, entry: Entry) -> None:
        why = self.check(obj)
        if why is not None:
            raise InputError(f"{entry.source} is not a {self.kind}: {why}", field=self.field)
        self._objects[name] = obj
        self._entries[name] = entry
