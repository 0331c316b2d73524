"""Every ```python block of docs/python.md and README.md runs, and the marker
rules of tests/docs/doc_snippets.py (shared with the C++ snippet test,
docs.snippets_compile) hold.

A block runs with `os`, `torch` and `hostir` imported; a block marked
`<!-- snippet: context=NAME -->` runs after the prelude NAME below (the
names it uses without defining them); a prelude with an environment runs in
a process of its own (a rank of a world of one)."""

import os
import pathlib
import subprocess
import sys

import pytest
import torch

import hostir

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "docs"))
import doc_snippets  # noqa: E402

PYTHON_DOCS = [ROOT / "README.md", ROOT / "docs" / "python.md", ROOT / "docs" / "training.md"]

_TWO_OUTPUTS = """
with hostir.FusionDefinition() as fd:
    x, w = fd.define_tensor(2), fd.define_tensor(2)
    y = fd.ops.relu(fd.ops.linear(x, w))
    fd.add_output(y)
    fd.add_output(fd.ops.sum(y, axes=[1]))
inputs = [torch.randn(8, 16), torch.randn(32, 16)]
"""

# name: (code, environment or None)
PRELUDES = {
    # A fusion `fd` with two outputs, its `inputs`, and buffers for its results.
    "fusion_and_buffers": (_TWO_OUTPUTS + "y_out, s_out = torch.empty(8, 32), torch.empty(8)\n",
                           None),
    # A fusion `fd` and its `inputs`.
    "fusion_and_inputs": (_TWO_OUTPUTS, None),
    # The inputs `x` and `w` of a linear layer.
    "linear_inputs": ("x, w = torch.randn(64, 32), torch.randn(16, 32)\n", None),
    # Rank 0 of a world of one, and the unsharded input `full_x`.
    "one_rank": ("full_x = torch.randn(8, 4)\n",
                 {"RANK": "0", "WORLD_SIZE": "1", "HOSTIR_COMM_TIMEOUT_S": "60"}),
}


def _python_blocks():
    for path in PYTHON_DOCS:
        for block in doc_snippets.blocks(path, "python"):
            yield pytest.param(block, id=f"{path.name}:{block.line}")


@pytest.mark.parametrize("block", list(_python_blocks()))
def test_doc_python_block_runs(block, tmp_path, monkeypatch):
    if block.skip_reason is not None:
        pytest.skip(block.skip_reason)
    monkeypatch.chdir(tmp_path)  # a block may write files (a cache file)
    prelude, environment = "", None
    if block.context is not None:
        assert block.context in PRELUDES, (
            f"{block.where()}: unknown context {block.context!r}; known: {sorted(PRELUDES)}")
        prelude, environment = PRELUDES[block.context]
    # Padding: a traceback names the doc's own line.
    code = "\n" * (block.line - 1) + block.code
    if environment is None:
        namespace = {"os": os, "torch": torch, "hostir": hostir}
        exec(compile(prelude, f"<prelude {block.context}>", "exec"), namespace)
        exec(compile(code, str(block.path), "exec"), namespace)
        return
    script = tmp_path / "snippet.py"
    script.write_text("import os, torch, hostir\n" + prelude + code.lstrip("\n"))
    package_root = str(pathlib.Path(hostir.__file__).resolve().parents[1])
    env = dict(os.environ, **environment)
    env["PYTHONPATH"] = os.pathsep.join([package_root] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, f"{block.where()}:\n{result.stdout}{result.stderr}"


def test_every_docs_cpp_block_has_a_valid_marker(tmp_path):
    docs = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    count = doc_snippets.write_cpp(docs, tmp_path / "snippets.cpp")
    assert count > 0


def _doc(tmp_path, text):
    path = tmp_path / "doc.md"
    path.write_text(text)
    return path


def test_a_skipped_block_needs_a_reason(tmp_path):
    doc = _doc(tmp_path, "<!-- snippet: skip -->\n```cpp\nint x;\n```\n")
    with pytest.raises(ValueError, match="needs a reason"):
        doc_snippets.blocks(doc, "cpp")
    doc = _doc(tmp_path, "<!-- snippet: skip: a sketch -->\n```cpp\nint x;\n```\n")
    assert doc_snippets.blocks(doc, "cpp")[0].skip_reason == "a sketch"


def test_an_unknown_marker_is_an_error(tmp_path):
    doc = _doc(tmp_path, "<!-- snippet: wrapper=X -->\n```cpp\nint x;\n```\n")
    with pytest.raises(ValueError, match="unknown snippet marker 'wrapper=X'; valid"):
        doc_snippets.blocks(doc, "cpp")


def test_blocks_in_list_items_are_found_and_dedented(tmp_path):
    doc = _doc(tmp_path, "- item\n\n  <!-- snippet: context=AFusion -->\n  ```cpp\n"
               "  int x = 1;\n    int y = 2;\n  ```\n\n```python\nz = 3\n```\n")
    (block,) = doc_snippets.blocks(doc, "cpp")
    assert block.code == "int x = 1;\n  int y = 2;"
    assert block.context == "AFusion"
    assert block.line == 5
    (python,) = doc_snippets.blocks(doc, "python")
    assert python.code == "z = 3"


def test_the_generated_unit_wraps_hoists_and_points_at_the_doc(tmp_path):
    doc = _doc(tmp_path, "```cpp\n#include <map>\nstd::map<int, int> m;\n```\n"
               "<!-- snippet: context=AFusion -->\n```cpp\nfusion.print();\n```\n"
               "<!-- snippet: toplevel -->\n```cpp\nint twice(int x) { return 2 * x; }\n```\n"
               "<!-- snippet: skip: not C++ -->\n```cpp\n$ hostir run mlp\n```\n")
    output = tmp_path / "out.cpp"
    assert doc_snippets.write_cpp([doc], output) == 3
    text = output.read_text()
    assert text.index("#include <map>") < text.index("namespace hostir::doc_snippets")
    assert f'#line 2 "{doc.resolve()}"' in text  # the block's first line
    assert "struct Snippet1 : Plain {" in text
    assert "struct Snippet2 : AFusion {" in text
    assert "void Snippet2::body() {" in text  # out of line: compiled and linked
    assert "int twice(int x)" in text and "void Snippet3::body" not in text
    assert "hostir run mlp" not in text
