"""The house in layers: no import circle and no import that runs up a layer.

The layers are written down in ``tests/layers/python.toml`` (the package) and
``tests/layers/rust.toml`` (the core crate), bottom first; docs/architecture.md says what each
holds and where a new concept goes. The check reads the source as text, so it costs
milliseconds and needs neither an interpreter per module nor a build.

Edges, for both languages:

- every import counts, wherever it stands (a lazy import inside a function, or one under
  ``if TYPE_CHECKING``, still makes the design circular);
- a package's ``__init__.py`` (or a Rust parent file) naming its own descendants is how a
  package publishes them, not a dependency: such edges are left out;
- a module that imports a name through a parent package's re-export depends on that parent.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
SPECS = Path(__file__).resolve().parent / "layers"
PACKAGE = ROOT / "python" / "toolsurface"
CORE = ROOT / "crates" / "toolsurface-core" / "src"
CRATES = ROOT / "crates"


@dataclass(frozen=True)
class Layers:
    """Layer names bottom first and the path patterns of each, from one spec file."""

    names: tuple[str, ...]
    patterns: tuple[tuple[str, ...], ...]

    @classmethod
    def read(cls, path: Path) -> Layers:
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
        layers = spec["layer"]
        return cls(
            tuple(layer["name"] for layer in layers),
            tuple(tuple(layer["paths"]) for layer in layers),
        )

    def of(self, rel: str) -> list[int]:
        """The layers whose patterns match a file path relative to the spec's root."""
        return [i for i, pats in enumerate(self.patterns) if any(_match(rel, p) for p in pats)]


def _match(rel: str, pattern: str) -> bool:
    """Glob match where ``*`` stays within one folder and ``**`` spans any depth."""
    regex = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            regex += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            regex += ".*"
            i += 2
        elif pattern[i] == "*":
            regex += "[^/]*"
            i += 1
        else:
            regex += re.escape(pattern[i])
            i += 1
    return re.fullmatch(regex, rel) is not None


# ---------------------------------------------------------------------------------------
# Python


def python_modules(package: Path) -> dict[str, Path]:
    """Dotted module name to file, for every module of the package."""
    out = {}
    # A compiled module is known by its stub (``_native.pyi``): an import of it is an edge.
    stubs = [p for p in package.rglob("*.pyi") if not p.with_suffix(".py").exists()]
    for path in sorted([*package.rglob("*.py"), *stubs]):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def python_edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of other modules of the package (the rule in the module doc)."""
    root = next(iter(modules)).split(".")[0]
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if _is_package(path) else name.rpartition(".")[0]
        out: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                out.update(_module_of(a.name, modules) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, package)
                for alias in node.names:
                    sub = f"{base}.{alias.name}" if base else alias.name
                    out.add(sub if sub in modules else _module_of(base, modules))
        edges[name] = {
            m for m in out if m and m != name and (m == root or m.startswith(root + "."))
        }
    return edges


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _module_of(dotted: str, modules: dict[str, Path]) -> str:
    """The deepest module of the package that a dotted path names (or the path itself)."""
    parts = dotted.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts)


def python_rel(modules: dict[str, Path], package: Path) -> dict[str, str]:
    return {m: p.relative_to(package).as_posix() for m, p in modules.items()}


def python_descends(child: str, parent: str, modules: dict[str, Path]) -> bool:
    """Whether ``parent`` is a package ``__init__`` and ``child`` lies inside it."""
    return _is_package(modules[parent]) and child.startswith(parent + ".")


# ---------------------------------------------------------------------------------------
# Rust

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRING = re.compile(r'r#*"(?:.|\n)*?"#*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'')
_USE = re.compile(r"\buse\s+([^;]+);")
_PATH = re.compile(r"(?<![\w:])((?:crate|super|self)(?:\s*::\s*\w+)+)")


def rust_modules(src: Path) -> dict[tuple[str, ...], Path]:
    """Module path (``()`` for the crate root) to file, for every file of a crate."""
    out = {}
    for path in sorted(src.rglob("*.rs")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts in (["lib"], ["main"]):
            parts = []
        elif parts[-1] == "mod":
            parts.pop()
        out[tuple(parts)] = path
    return out


def _strip_tests(code: str) -> str:
    """Code without ``#[cfg(test)]`` items: a test module's imports are not the design's."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", code):
        if m.start() < i:
            continue
        out.append(code[i : m.start()])
        depth, j = 1, m.end()
        while depth and j < len(code):
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        i = j
    out.append(code[i:])
    return "".join(out)


def _use_paths(tree: str) -> Iterable[str]:
    """The paths a ``use`` tree names: ``a::{b, c::{d, e}}`` gives a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree))
    if "{" not in tree:
        yield tree
        return
    head, _, rest = tree.partition("{")
    body = rest[: rest.rfind("}")]
    depth, start = 0, 0
    for k, ch in enumerate(body + ","):
        if ch in "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            part = body[start:k]
            start = k + 1
            if part and part != "self":
                yield from _use_paths(head + part)
            elif part == "self":
                yield head.rstrip(":")


def rust_edges(modules: dict[tuple[str, ...], Path]) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """Each file's uses of other files of the crate (``crate::``, ``super::``, ``self::``)."""
    edges: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for mod, path in modules.items():
        code = _strip_tests(_STRING.sub('""', _COMMENT.sub("", path.read_text(encoding="utf-8"))))
        paths = set(_PATH.findall(code))
        for use in _USE.findall(code):
            for p in _use_paths(use.removeprefix("pub").strip()):
                paths.add(p)
        out = set()
        for p in paths:
            target = _resolve_rust(mod, [s for s in re.split(r"\s*::\s*", p) if s], modules)
            if target is not None and target != mod:
                out.add(target)
        edges[mod] = out
    return edges


def _resolve_rust(
    mod: tuple[str, ...], segs: list[str], modules: dict[tuple[str, ...], Path]
) -> tuple[str, ...] | None:
    if not segs:
        return None
    if segs[0] == "crate":
        base, rest = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = mod
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
        rest = segs
    elif (*mod, segs[0]) in modules:  # a child module named without `self::`
        base, rest = mod, segs
    else:
        return None  # another crate, or a local item
    for k in range(len(rest), -1, -1):
        if base + tuple(rest[:k]) in modules:
            return base + tuple(rest[:k])
    return None


# ---------------------------------------------------------------------------------------
# The checks


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more nodes (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def upward(edges: dict[str, set[str]], layer: dict[str, int], names: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{a} ({names[layer[a]]}) imports {b} ({names[layer[b]]})"
        for a, targets in edges.items()
        for b in targets
        if layer[b] > layer[a]
    )


def _layered(rel: dict[str, str], spec: Layers) -> tuple[dict[str, int], list[str], list[str]]:
    """Each module's layer, and the modules that match no layer or several."""
    layer, none, several = {}, [], []
    for mod, path in rel.items():
        found = spec.of(path)
        if not found:
            none.append(path)
        elif len(found) > 1:
            several.append(f"{path}: {[spec.names[i] for i in found]}")
        else:
            layer[mod] = found[0]
    return layer, sorted(none), sorted(several)


def _python_graph() -> tuple[dict[str, set[str]], dict[str, str]]:
    modules = python_modules(PACKAGE)
    edges = python_edges(modules)
    kept = {
        a: {
            b
            for b in bs
            if not python_descends(a, b, modules) and not python_descends(b, a, modules)
        }
        for a, bs in edges.items()
    }
    return kept, python_rel(modules, PACKAGE)


def _rust_graph(src: Path) -> tuple[dict[str, set[str]], dict[str, str]]:
    modules = rust_modules(src)
    edges = rust_edges(modules)
    name = {m: "::".join(("crate", *m)) for m in modules}
    kept = {
        name[a]: {name[b] for b in bs if b[: len(a)] != a}  # a parent naming its descendants
        for a, bs in edges.items()
    }
    return kept, {name[m]: p.relative_to(src).as_posix() for m, p in modules.items()}


# ---------------------------------------------------------------------------------------
# Tests


def test_the_python_reader_sees_the_package() -> None:
    modules = python_modules(PACKAGE)
    edges = python_edges(modules)
    assert len(modules) > 40
    # The package's front door imports the registry: the reader follows real imports.
    assert any("registry" in m for m in edges["toolsurface"])


def test_no_python_import_circle() -> None:
    edges, _ = _python_graph()
    found = cycles(edges)
    assert not found, "import circles in python/toolsurface:\n" + "\n".join(map(str, found))


def test_every_python_module_has_one_layer_and_imports_only_down() -> None:
    spec = Layers.read(SPECS / "python.toml")
    edges, rel = _python_graph()
    layer, none, several = _layered(rel, spec)
    assert not none, f"modules in no layer of tests/layers/python.toml: {none}"
    assert not several, f"modules in several layers: {several}"
    bad = upward(edges, layer, spec.names)
    assert not bad, "imports that run up a layer:\n" + "\n".join(bad)


@pytest.mark.parametrize("crate", sorted(p.name for p in CRATES.iterdir() if (p / "src").is_dir()))
def test_no_rust_import_circle(crate: str) -> None:
    edges, _ = _rust_graph(CRATES / crate / "src")
    assert len(edges) > 5
    found = cycles(edges)
    assert not found, f"use circles in crates/{crate}/src:\n" + "\n".join(map(str, found))


def test_every_core_file_has_one_layer_and_uses_only_down() -> None:
    spec = Layers.read(SPECS / "rust.toml")
    edges, rel = _rust_graph(CORE)
    layer, none, several = _layered(rel, spec)
    assert not none, f"files in no layer of tests/layers/rust.toml: {none}"
    assert not several, f"files in several layers: {several}"
    bad = upward(edges, layer, spec.names)
    assert not bad, "uses that run up a layer:\n" + "\n".join(bad)


# The checker itself, on small trees written here: a check that cannot fail proves nothing.


def test_the_python_check_finds_a_circle_and_an_upward_import(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg.top import run\n")
    (pkg / "top.py").write_text("x = 1\n")
    (pkg / "low" / "__init__.py").write_text("from pkg.low.a import x\n")
    (pkg / "low" / "a.py").write_text("from .b import y\n")
    (pkg / "low" / "b.py").write_text(
        "def f():\n    from pkg.low import a\n    from pkg import top\n"
    )
    modules = python_modules(pkg)
    edges = python_edges(modules)
    assert edges["pkg.low.a"] == {"pkg.low.b"}
    assert edges["pkg.low.b"] == {"pkg.low.a", "pkg.top"}
    assert cycles(edges) == [["pkg.low.a", "pkg.low.b"]]
    spec = Layers(("low", "top"), (("low/**",), ("top.py", "__init__.py")))
    layer, none, several = _layered(python_rel(modules, pkg), spec)
    assert (none, several) == ([], [])
    assert upward(edges, layer, spec.names) == ["pkg.low.b (low) imports pkg.top (top)"]


def test_the_rust_check_reads_use_trees_super_and_inline_paths(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "index").mkdir(parents=True)
    (src / "lib.rs").write_text("mod index;\nmod scoring;\npub use index::Index;\n")
    (src / "index" / "mod.rs").write_text(
        "mod build;\npub use self::build::Index;\nuse crate::{scoring::{bm25, Cache}};\n"
    )
    (src / "index" / "build.rs").write_text(
        "// crate::scoring is named in a comment only\n"
        "pub struct Index;\nfn f() { super::helper(); }\n"
        '#[cfg(test)]\nmod tests { use crate::scoring::bm25; fn t() { let s = "{"; } }\n'
    )
    (src / "scoring.rs").write_text("pub fn bm25() { crate::index::build::touch(); }\n")
    modules = rust_modules(src)
    edges = rust_edges(modules)
    assert edges[()] == {("index",)}
    assert edges[("index",)] == {("index", "build"), ("scoring",)}
    assert edges[("index", "build")] == {("index",)}
    assert edges[("scoring",)] == {("index", "build")}
    kept, _ = _rust_graph(src)
    assert cycles(kept) == [["crate::index", "crate::index::build", "crate::scoring"]]


def test_use_trees_expand_to_every_path() -> None:
    got = sorted(_use_paths("crate::a::{b, c::{d, e as f}, self}"))
    assert got == ["crate::a", "crate::a::b", "crate::a::c::d", "crate::a::c::e"]


def test_globs_keep_a_single_star_in_one_folder() -> None:
    assert _match("analysis/idents.rs", "analysis/*.rs")
    assert not _match("analysis/deep/x.rs", "analysis/*.rs")
    assert _match("gateway/store/redis.py", "gateway/**")
    assert _match("x.py", "**/x.py")
    assert not _match("gateway/store.py", "gateway/store")


def _package_trees() -> dict[str, ast.Module]:
    return {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in python_modules(PACKAGE).items()}


def _package_of(module: str, trees: dict[str, ast.Module]) -> str:
    """A module's package: itself for a package ``__init__``, else its parent."""
    is_init = PACKAGE.joinpath(*module.split(".")[1:], "__init__.py").exists()
    return module if is_init else module.rpartition(".")[0]


def private_imports(trees: dict[str, ast.Module]) -> list[str]:
    """Underscore names a module imports from a module of another package."""
    found = []
    for module, tree in trees.items():
        own = _package_of(module, trees)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            source = _absolute(node, own)
            if not source.startswith("toolsurface") or _package_of(source, trees) == own:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{module} imports {alias.name} from {source}")
    return sorted(found)


def mixed_classes(trees: dict[str, ast.Module]) -> list[str]:
    """Classes built from two or more of the package's own classes: mixins sharing state."""
    ours = {n.name for t in trees.values() for n in ast.walk(t) if isinstance(n, ast.ClassDef)}
    found = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [b.id for b in node.bases if isinstance(b, ast.Name) and b.id in ours]
                if len(bases) > 1:
                    found.append(f"{module}.{node.name}({', '.join(bases)})")
    return sorted(found)


def test_no_module_imports_a_private_name_of_another_package() -> None:
    found = private_imports(_package_trees())
    assert not found, "private names used across packages:\n" + "\n".join(found)


def test_no_class_is_assembled_from_mixins() -> None:
    found = mixed_classes(_package_trees())
    assert not found, "classes made of several of the package's classes:\n" + "\n".join(found)


def test_the_private_name_and_mixin_checks_can_fail() -> None:
    trees = {
        "toolsurface.a.x": ast.parse("from toolsurface.b.y import _Secret, Open\n"),
        "toolsurface.a.z": ast.parse("from toolsurface.a.x import _near\n"),
        "toolsurface.b.y": ast.parse(
            "class _Secret: ...\nclass Open: ...\nclass Both(_Secret, Open, Exception): ...\n"
        ),
    }
    assert private_imports(trees) == ["toolsurface.a.x imports _Secret from toolsurface.b.y"]
    assert mixed_classes(trees) == ["toolsurface.b.y.Both(_Secret, Open)"]
