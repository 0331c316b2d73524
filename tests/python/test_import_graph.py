"""The modules of python/hostir import each other without a cycle (issue 40:
fusion_definition.py <-> cache.py, distributed.py, segments.py was one, through
imports inside functions), and fusion_state.py, which holds Error, FusionState
and the value handles every other module reads, is a leaf: it imports no
other module of the package but the C++ extension. Read from the source with
`ast`, every import counted, also those inside functions."""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "hostir"
# Built, not written: the C++ extension and the version file.
BUILT = {"_C", "_version"}


def imported_siblings(path, modules):
    """The modules of the package that the module at `path` imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 or (node.level == 0 and node.module and
                                   node.module.split(".")[0] == "hostir"):
                parts = (node.module or "").split(".")
                parts = parts[1:] if node.level == 0 else parts
                if parts and parts[0]:
                    found.add(parts[0])
                else:  # from . import a, b / from hostir import a, b
                    found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "hostir" and len(parts) > 1:
                    found.add(parts[1])
    return {name for name in found if name in modules or name in BUILT}


def import_graph(package=PACKAGE):
    modules = {path.stem: path for path in package.glob("*.py") if path.stem != "__init__"}
    return {name: imported_siblings(path, modules) - BUILT for name, path in modules.items()}


def find_cycle(graph):
    """One cycle of the graph as a list of modules (first == last), or None."""
    state = {}  # module -> "open" while on the path, "done" after

    def visit(module, path):
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return path[path.index(imported):] + [imported]
            if imported not in state:
                cycle = visit(imported, path + [imported])
                if cycle:
                    return cycle
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module, [module])
            if cycle:
                return cycle
    return None


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert "fusion_definition" in graph and "cache" in graph, graph
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_fusion_state_is_a_leaf():
    assert import_graph()["fusion_state"] == set()


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    # The check itself: the shape of the old cycle (cache imported
    # fusion_definition inside a method) is reported.
    (tmp_path / "fusion_definition.py").write_text("from .cache import FusionCache\n")
    (tmp_path / "cache.py").write_text(
        "def read():\n    from .fusion_definition import FusionState\n")
    (tmp_path / "leaf.py").write_text("from . import _C\n")
    graph = import_graph(tmp_path)
    assert graph["leaf"] == set()
    assert find_cycle(graph) == ["cache", "fusion_definition", "cache"]


# Run in a fresh interpreter: the package without its __init__ (which
# imports everything in an order that would hide a cycle), each module
# imported first and alone, its package siblings forgotten in between.
IMPORT_EACH_ALONE = """
import importlib, sys, types
import torch  # the extension needs libtorch loaded first
package_dir, names = sys.argv[1], sys.argv[2:]
failed = []
for name in names:
    for loaded in [m for m in sys.modules if m.startswith("hostir.") and m != "hostir._C"]:
        del sys.modules[loaded]
    package = types.ModuleType("hostir")
    package.__path__ = [package_dir]
    sys.modules["hostir"] = package
    try:
        importlib.import_module("hostir." + name)
    except Exception as error:
        failed.append(f"{name}: {type(error).__name__}: {error}")
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def test_each_module_imports_alone_in_a_fresh_interpreter():
    import subprocess
    import sys

    import hostir

    package_dir = hostir.__path__[0]
    names = sorted(p.stem for p in pathlib.Path(package_dir).glob("*.py")
                   if p.stem != "__init__" and (PACKAGE / p.name).exists())
    assert "fusion_definition" in names and "cache" in names and "distributed" in names
    result = subprocess.run([sys.executable, "-c", IMPORT_EACH_ALONE, package_dir, *names],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_importing_alone_finds_a_cycle_that_breaks_an_import(tmp_path):
    # The check itself: a module whose import needs a name of a module that
    # imports it back fails when imported first, and is named.
    import subprocess
    import sys

    (tmp_path / "state.py").write_text("from .cache import Cache\nclass State: pass\n")
    (tmp_path / "cache.py").write_text("from .state import State\nclass Cache: pass\n")
    (tmp_path / "leaf.py").write_text("VALUE = 1\n")
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH_ALONE, str(tmp_path), "leaf", "state"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "state: ImportError" in result.stdout and "leaf" not in result.stdout
