"""The direction of imports between layers, read from the source (no import runs).

hymem is built in layers. A module imports from its own package and from the layers below its
package's, never from a layer above it or beside it, and no module reaches itself again through
its imports (no import cycle, however long). Bottom to top:

    1. hymem.core           the shared vocabulary: types, errors, config, time, logging,
                            tracing, filters, metadata, validation, webhook endpoints
    2. hymem.prompts, hymem.embed, hymem.facts, hymem.indexes
    3. hymem.llm
    4. hymem.search
    5. hymem.write, hymem.read
    6. hymem.sleep, hymem.backfill
    7. hymem.imports
    8. hymem.manage
    9. hymem.ops
   10. hymem.api
   11. hymem.serve, hymem.evaluation, hymem.adapters
   12. hymem.cli, hymem.client
   13. hymem, hymem.testing  the package itself (`hymem/__init__.py`, and any module beside
                            it such as a deprecated alias): what users import; and the
                            conformance suites a third-party store runs (never imported
                            by hymem)

Every module belongs to one of them (a new package must be placed here first), and inside a
package (hymem.indexes with its subpackages is one) modules import each other freely but never
in a circle.

And only the store-opening modules (indexes/open.py, indexes/folder/open.py,
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
ENGINE, INDEXES, PROMPTS = ROOT / "engine", ROOT / "indexes", ROOT / "prompts"

# The module docstring's list, bottom to top: a package imports only its own modules and those
# of the layers before its own.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("hymem.core",),
    ("hymem.prompts", "hymem.embed", "hymem.facts", "hymem.indexes"),
    ("hymem.llm",),
    ("hymem.search",),
    ("hymem.write", "hymem.read"),
    ("hymem.sleep", "hymem.backfill"),
    ("hymem.imports",),
    ("hymem.manage",),
    ("hymem.ops",),
    ("hymem.api",),
    ("hymem.serve", "hymem.evaluation", "hymem.adapters"),
    ("hymem.cli", "hymem.client"),
    ("hymem", "hymem.testing"),
)
LAYER_OF = {package: n for n, layer in enumerate(LAYERS) for package in layer}
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
    elif path.is_relative_to(PROMPTS):
        parts = ["hymem", "prompts", *path.relative_to(PROMPTS).with_suffix("").parts]
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


INDEX_SOURCES = _sources(INDEXES)
ENGINE_SOURCES = _sources(ENGINE)
ALL_SOURCES = INDEX_SOURCES + ENGINE_SOURCES + _sources(PROMPTS)
MODULES = frozenset(s.module for s in ALL_SOURCES)
PACKAGES = frozenset(s.module for s in ALL_SOURCES if _is_package(s))


def package_of(module: str) -> str:
    """The layered package a module belongs to: `hymem.<first name>` for a module of a
    subpackage, else (the package's own `__init__`, a module beside it) `hymem` itself."""
    first = ".".join(module.split(".")[:2])
    return first if first in PACKAGES else "hymem"


def reached(imp: Import, modules: frozenset[str] = MODULES) -> set[str]:
    """The modules of hymem an import runs: `from hymem.indexes import paging` reaches
    hymem.indexes.paging, `from hymem.core.types import Level` hymem.core.types and
    `from hymem import __version__` the package hymem. A target that is no module (a stale
    name) counts as the nearest module above it."""
    out: set[str] = set()
    for target in [f"{imp.module}.{n}" for n in imp.names] or [imp.module]:
        if target not in modules:
            target = imp.module
        while target not in modules and "." in target:
            target = target.rpartition(".")[0]
        out.add(target)
    return out


def upward_imports(sources: list[Source], modules: frozenset[str] = MODULES) -> list[str]:
    """Each import that reaches a package of the same layer or of a higher one than its own
    (a package's own modules aside), as "module (file:line) imports target"."""
    bad: list[str] = []
    for s in sources:
        own = package_of(s.module)
        for imp in imports(s):
            for target in sorted(reached(imp, modules)):
                other = package_of(target)
                if other != own and LAYER_OF.get(other, -1) >= LAYER_OF[own]:
                    bad.append(f"{s.where(imp.line)} imports {target}")
    return bad


def import_cycles(sources: list[Source], modules: frozenset[str] = MODULES) -> list[str]:
    """Each set of modules that reach each other through their imports (Tarjan's strongly
    connected components), with the imports that close the circle."""
    edges: dict[str, dict[str, str]] = {s.module: {} for s in sources}
    for s in sources:
        for imp in imports(s):
            for target in reached(imp, modules):
                if target != s.module and target in edges:
                    edges[s.module].setdefault(target, s.where(imp.line))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[str] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                members = set(component)
                found.append(
                    " <-> ".join(sorted(members))
                    + "".join(
                        f"\n    {where} imports {w}"
                        for u in sorted(members)
                        for w, where in sorted(edges[u].items())
                        if w in members
                    )
                )

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_scan_sees_the_layers() -> None:
    """Guards the test itself: the folders hold what the rules below speak of."""
    assert {"hymem.indexes.protocol", "hymem.search.hybrid", "hymem.api.memory"} <= MODULES
    assert {"hymem", "hymem.core.config", "hymem.prompts.schemas"} <= MODULES
    assert any(imports(s) for s in INDEX_SOURCES)


def test_the_docstring_lists_the_layers() -> None:
    """The numbered list above is LAYERS, so it can be quoted as it is (the layout in the README
    and docs/design.md; tests/integration/test_doc_blocks.py checks the quotes)."""
    listed = [
        tuple(name.strip() for name in line.split(".", 1)[1].split("  ")[0].split(","))
        for line in (__doc__ or "").splitlines()
        if line.strip()[:1].isdigit()
    ]
    assert listed == list(LAYERS)


def test_every_package_has_a_layer() -> None:
    unplaced = sorted({package_of(m) for m in MODULES} - set(LAYER_OF))
    assert not unplaced, f"packages missing from LAYERS (and the docstring): {unplaced}"


def test_imports_only_point_down() -> None:
    bad = upward_imports(ALL_SOURCES)
    assert not bad, "imports of a layer above or beside the module's own:\n" + "\n".join(bad)


def test_no_import_cycles() -> None:
    cycles = import_cycles(ALL_SOURCES)
    assert not cycles, "modules that import each other:\n" + "\n".join(cycles)


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
        "    import hymem.sleep.consolidator\n"
        "    from hymem import __version__\n",
    )
    assert {t for imp in imports(src) for t in reached(imp)} == {
        "hymem.indexes.store.records",
        "hymem.indexes.lance.sql",
        "hymem.search",
        "hymem.read.reader",
        "hymem.sleep.consolidator",
        "hymem",
    }
    assert "hymem.indexes.store.records" in {t for imp in imports(src) for t in imp.targets()}


def test_the_layer_check_refuses_upward_and_sideways_imports() -> None:
    modules = MODULES | {"hymem.core.probe", "hymem.write.probe"}
    core = _fake("engine/core/probe.py", "def f() -> None:\n    from hymem.ops import calls\n")
    write = _fake(
        "engine/write/probe.py",
        "from hymem.core import types\nfrom hymem.write import guard\nimport hymem.read.run\n",
    )
    assert upward_imports([core, write], modules) == [
        "hymem.core.probe (engine/core/probe.py:2) imports hymem.ops.calls",
        "hymem.write.probe (engine/write/probe.py:3) imports hymem.read.run",
    ]


def test_the_cycle_check_sees_a_circle_through_a_type_only_import() -> None:
    a = _fake("engine/read/a.py", "from hymem.read.b import B\n")
    b = _fake(
        "engine/read/b.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hymem.read.c import C\n",
    )
    c = _fake("engine/read/c.py", "def f() -> None:\n    from hymem.read import a\n")
    alone = _fake("engine/read/d.py", "from hymem.read.a import A\n")
    modules = frozenset({"hymem.read.a", "hymem.read.b", "hymem.read.c", "hymem.read.d"})
    [cycle] = import_cycles([a, b, c, alone], modules)
    assert cycle.splitlines()[0] == "hymem.read.a <-> hymem.read.b <-> hymem.read.c"
    assert "hymem.read.c (engine/read/c.py:2) imports hymem.read.a" in cycle
    assert "hymem.read.d" not in cycle


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
