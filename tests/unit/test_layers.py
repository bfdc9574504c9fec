"""The direction of imports between layers, read from the source (no import runs).

    hymem.indexes  (storage)   may use only the shared leaves below, never hymem.search
    hymem.search   (retrieval) never reaches the read/write/sleep/manage paths or the facades
    leaves: hymem.core.types, errors, time, logging, filters, metadata (import only each other)

and only the store-opening modules (indexes/open.py, indexes/folder/open.py,
indexes/objects/open.py) know which concrete store they built: nothing else imports
hymem.indexes.objects.store or asks `isinstance` of a concrete store class, and only
indexes/open.py calls the per-kind openers.

Every import counts: module level, inside functions, under `if TYPE_CHECKING:`. And the tests
themselves share helpers through tests/doubles.py and tests/fixtures_*.py, never by importing
another test module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE, INDEXES = ROOT / "engine", ROOT / "indexes"

LEAVES = frozenset(
    {
        "hymem.core",  # the package itself imports nothing; its modules are checked one by one
        "hymem.core.types",
        "hymem.core.errors",
        "hymem.core.time",
        "hymem.core.logging",
        "hymem.core.filters",
        "hymem.core.metadata",
    }
)
ABOVE_SEARCH = ("read", "write", "sleep", "manage", "serve", "cli", "evaluation", "api")
CONCRETE_STORE_MODULES = frozenset(
    {"hymem.indexes.store.store", "hymem.indexes.objects.store", "hymem.indexes.memory.store"}
)
OPENERS = frozenset({"indexes/open.py", "indexes/folder/open.py", "indexes/objects/open.py"})
KIND_OPENERS = frozenset({"open_folder_store", "open_object_store"})  # called by open.py only


@dataclass(frozen=True)
class Import:
    """One import statement's target, resolved to a dotted module name."""

    module: str  # "hymem.search.hybrid"
    names: tuple[str, ...]  # the names taken by `from module import a, b`
    line: int
    bound: tuple[str, ...] = ()  # what the file calls them: per name, or the module's alias

    def __str__(self) -> str:
        return f"{self.module} ({', '.join(self.names)})" if self.names else self.module

    def targets(self) -> Iterator[str]:
        """The module, and `module.name` for each name (which may itself be a submodule)."""
        yield self.module
        for name in self.names:
            yield f"{self.module}.{name}"


@dataclass(frozen=True)
class Source:
    path: Path
    module: str  # dotted name it is imported as
    tree: ast.Module

    @property
    def rel(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    def where(self, line: int) -> str:
        return f"{self.module} ({self.rel}:{line})"


def _module_name(path: Path) -> str:
    if path.is_relative_to(INDEXES):
        parts = ["hymem", "indexes", *path.relative_to(INDEXES).with_suffix("").parts]
    else:
        parts = ["hymem", *path.relative_to(ENGINE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources(folder: Path) -> list[Source]:
    out = []
    for path in sorted(folder.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        out.append(Source(path, _module_name(path), tree))
    return out


def _is_package(source: Source) -> bool:
    return source.path.name == "__init__.py"


def imports(source: Source) -> list[Import]:
    """Every import in the file (all scopes), relative ones resolved; only hymem's."""
    package = source.module if _is_package(source) else source.module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Import):
            found += [Import(a.name, (), node.lineno, (a.asname or a.name,)) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            names = tuple(a.name for a in node.names)
            bound = tuple(a.asname or a.name for a in node.names)
            found.append(Import(module, names, node.lineno, bound))
    return [i for i in found if i.module == "hymem" or i.module.startswith("hymem.")]


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _hymem_modules(imp: Import) -> set[str]:
    """The hymem modules an import reaches: `from hymem.core import types` reaches hymem.core.types;
    `from hymem.core.types import Level` reaches hymem.core.types; `import hymem` reaches hymem."""
    if imp.module == "hymem" and imp.names:
        return {f"hymem.{n}" for n in imp.names}
    return {imp.module}


INDEX_SOURCES = _sources(INDEXES)
ENGINE_SOURCES = _sources(ENGINE)
ALL_SOURCES = INDEX_SOURCES + ENGINE_SOURCES


def test_the_scan_sees_the_layers() -> None:
    """Guards the test itself: the folders hold what the rules below speak of."""
    modules = {s.module for s in ALL_SOURCES}
    assert {"hymem.indexes.protocol", "hymem.search.hybrid", "hymem.api.memory"} <= modules
    assert modules >= LEAVES
    assert any(imports(s) for s in INDEX_SOURCES)


def test_storage_imports_only_storage_and_the_shared_leaves() -> None:
    bad = [
        f"{s.where(imp.line)} imports {target}"
        for s in INDEX_SOURCES
        for imp in imports(s)
        for target in sorted(_hymem_modules(imp))
        if not _within(target, "hymem.indexes") and target not in LEAVES
    ]
    assert not bad, "hymem.indexes reaches above storage:\n" + "\n".join(bad)


def test_storage_never_imports_search() -> None:
    bad = [
        f"{s.where(imp.line)} imports {imp}"
        for s in INDEX_SOURCES
        for imp in imports(s)
        if any(_within(target, "hymem.search") for target in imp.targets())
    ]
    assert not bad, "hymem.indexes imports hymem.search:\n" + "\n".join(bad)


def test_the_shared_leaves_import_only_each_other() -> None:
    bad = [
        f"{s.where(imp.line)} imports {target}"
        for s in ENGINE_SOURCES
        if s.module in LEAVES
        for imp in imports(s)
        for target in sorted(_hymem_modules(imp))
        if target not in LEAVES
    ]
    assert not bad, "a shared leaf module reaches into hymem:\n" + "\n".join(bad)


def test_search_does_not_reach_the_paths_above_it() -> None:
    above = [f"hymem.{name}" for name in ABOVE_SEARCH]
    search = [s for s in ENGINE_SOURCES if _within(s.module, "hymem.search")]
    assert search, "no hymem.search modules found"
    bad = [
        f"{s.where(imp.line)} imports {target}"
        for s in search
        for imp in imports(s)
        for target in sorted(_hymem_modules(imp))
        if any(_within(target, a) for a in above)
    ]
    assert not bad, "hymem.search imports from a layer above it:\n" + "\n".join(bad)


def _concrete_store_classes() -> set[str]:
    """The store classes the concrete store modules define (Store, RemoteStore, ...)."""
    names: set[str] = set()
    for s in INDEX_SOURCES:
        if s.module in CONCRETE_STORE_MODULES:
            names |= {
                n.name
                for n in s.tree.body
                if isinstance(n, ast.ClassDef) and n.name.endswith("Store")
            }
    return names


def _isinstance_of_store(source: Source, classes: set[str]) -> list[str]:
    """`isinstance`/`issubclass` calls in `source` whose class argument is a concrete store
    class, named directly or through an alias of its module."""
    local: set[str] = set()  # names bound to a concrete store class in this file
    modules: set[str] = set()  # names bound to a concrete store module
    for imp in imports(source):
        if not imp.names:  # import hymem.indexes.store.store [as st]
            if imp.module in CONCRETE_STORE_MODULES:
                modules |= set(imp.bound)
            continue
        for name, alias in zip(imp.names, imp.bound, strict=True):
            if imp.module in CONCRETE_STORE_MODULES and name in classes:
                local.add(alias)
            if f"{imp.module}.{name}" in CONCRETE_STORE_MODULES:
                modules.add(alias)
    if source.module in CONCRETE_STORE_MODULES:
        local |= classes & {n.name for n in source.tree.body if isinstance(n, ast.ClassDef)}
    found = []
    for node in ast.walk(source.tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"isinstance", "issubclass"}
            and len(node.args) == 2
        ):
            continue
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        for kind in kinds:
            named = ast.unparse(kind)
            if (isinstance(kind, ast.Name) and kind.id in local) or (
                isinstance(kind, ast.Attribute)
                and kind.attr in classes
                and ast.unparse(kind.value) in modules
            ):
                found.append(f"{source.where(node.lineno)} asks {node.func.id}(..., {named})")
    return found


def test_only_the_openers_know_the_concrete_store() -> None:
    if not (INDEXES / "open.py").exists():
        pytest.skip(
            "indexes/open.py does not exist yet: the store-opening modules are being written; "
            "this check switches on when it lands"
        )
    classes = _concrete_store_classes()
    assert classes, "no concrete store classes found"
    outside = [s for s in ALL_SOURCES if s.rel not in OPENERS]
    bad = [
        f"{s.where(imp.line)} imports {imp}"
        for s in outside
        if s.module != "hymem.indexes.objects.store"
        for imp in imports(s)
        if "hymem.indexes.objects.store" in imp.targets()
    ]
    bad += [
        f"{s.where(imp.line)} imports {imp}"
        for s in ALL_SOURCES
        if s.rel != "indexes/open.py"
        for imp in imports(s)
        if set(imp.names) & KIND_OPENERS
    ]
    bad += [found for s in outside for found in _isinstance_of_store(s, classes)]
    assert not bad, "only the opening modules may know the concrete store:\n" + "\n".join(bad)


def _test_module_imports(code: str, label: str) -> list[str]:
    """Imports in a file under tests/ that reach a test module (tests/**/test_*.py)."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        else:
            continue
        if any(t.startswith("tests.") and t.split(".")[-1].startswith("test_") for t in targets):
            found.append(f"{label}:{node.lineno} imports {', '.join(targets)}")
    return found


def test_tests_import_fixtures_and_doubles_never_another_test_module() -> None:
    """A shared helper lives in tests/doubles.py or a tests/fixtures_*.py module: importing a
    test module runs its module code and ties one suite's refactors to another's."""
    bad = [
        hit
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for hit in _test_module_imports(
            path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix()
        )
    ]
    assert not bad, "a test module is imported:\n" + "\n".join(bad)


# ---- the checks can fail: each rule, fed a module that breaks it --------------------------


def _fake(rel: str, code: str) -> Source:
    path = ROOT / rel
    return Source(path, _module_name(path), ast.parse(code))


def test_the_import_reader_resolves_every_form() -> None:
    src = _fake(
        "indexes/store/reads.py",
        "from typing import TYPE_CHECKING\n"
        "from . import records\n"
        "from ..lance import sql\n"
        "from hymem import search as s\n"
        "if TYPE_CHECKING:\n"
        "    from hymem.read.reader import Reader\n"
        "def f() -> None:\n"
        "    import hymem.sleep.consolidator\n",
    )
    reached = {t for imp in imports(src) for t in _hymem_modules(imp)}
    assert reached == {
        "hymem.indexes.store",
        "hymem.indexes.lance",
        "hymem.search",
        "hymem.read.reader",
        "hymem.sleep.consolidator",
    }
    assert "hymem.indexes.store.records" in {t for imp in imports(src) for t in imp.targets()}


def test_the_isinstance_check_sees_names_and_module_aliases() -> None:
    classes = {"Store", "RemoteStore"}
    src = _fake(
        "engine/api/memory_args.py",
        "from hymem.indexes.objects.store import RemoteStore as R\n"
        "from hymem.indexes.store import store as st\n"
        "import hymem.indexes.memory.store\n"
        "def f(x: object) -> bool:\n"
        "    return isinstance(x, (int, R)) or isinstance(x, st.Store) or issubclass(\n"
        "        type(x), hymem.indexes.memory.store.Store)\n",
    )
    found = _isinstance_of_store(src, classes)
    assert len(found) == 3 and all("hymem.api.memory_args" in f for f in found)
    harmless = _fake("engine/x.py", "def f(x: object) -> bool:\n    return isinstance(x, dict)\n")
    assert _isinstance_of_store(harmless, classes) == []


def test_the_test_module_check_sees_both_import_forms() -> None:
    code = (
        "from tests.unit.test_reader_ask import make\n"
        "from tests.unit import test_layers\n"
        "import tests.integration.test_eval_llm\n"
        "from tests.doubles import ScriptedRoles\n"
    )
    hits = _test_module_imports(code, "probe.py")
    assert [h.split(" ")[0] for h in hits] == ["probe.py:1", "probe.py:2", "probe.py:3"]
