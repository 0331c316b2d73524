#!/usr/bin/env python3
"""The code blocks of hostir's Markdown docs, so that tests can compile
(C++) or run (Python) every one of them.

Every ```cpp block of README.md and docs/*.md is compiled and linked against
hostir by the CTest test `docs.snippets_compile` (this script writes them
into one translation unit; see write_cpp). Every ```python block of
docs/python.md is run by tests/python/test_doc_snippets.py.

A block is code as a reader would paste it into a function body. An HTML
comment on the line right before the opening fence (invisible on the
rendered page) says otherwise:

  <!-- snippet: context=NAME -->
      The block is a fragment that uses names it does not declare (`fusion`,
      `t0`, `executor`). C++: its body runs in a member function of a
      struct derived from hostir::doc_snippets::NAME
      (tests/docs/snippet_contexts.h), whose members are those names.
      Python: the prelude NAME of tests/python/test_doc_snippets.py runs
      first.
  <!-- snippet: toplevel -->
      C++ only: the block declares things at namespace scope (a function, a
      struct), so it is not wrapped in a function.
  <!-- snippet: skip: REASON -->
      Not compiled or run; the reason is required (e.g. "a signature sketch
      with ... for omitted arguments").

C++ `#include` lines are moved to the top of the generated file; `#line`
directives make a compiler error point at the Markdown file and line.
"""

import argparse
import pathlib
import re
import sys

MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(?P<body>.*?)\s*-->\s*$")
# A fence may be indented (a block inside a list item).
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[A-Za-z0-9_+-]*)\s*$")
LANGUAGES = {"cpp": ("cpp", "c++", "cxx"), "python": ("python", "py")}


class Block:
    def __init__(self, path, line, code, marker):
        self.path = path  # pathlib.Path of the Markdown file
        self.line = line  # 1-based line of the block's first code line
        self.code = code  # the code, lines joined with "\n"
        self.context = None
        self.toplevel = False
        self.skip_reason = None
        if marker is None:
            return
        if marker.startswith("context="):
            self.context = marker[len("context="):].strip()
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.context):
                raise ValueError(f"{self.where()}: bad context name {self.context!r}")
        elif marker == "toplevel":
            self.toplevel = True
        elif marker.startswith("skip"):
            reason = marker[len("skip"):].lstrip(" :-—").strip()
            if not reason:
                raise ValueError(f"{self.where()}: a skipped snippet needs a reason: "
                                 "<!-- snippet: skip: REASON -->")
            self.skip_reason = reason
        else:
            raise ValueError(f"{self.where()}: unknown snippet marker {marker!r}; valid: "
                             "context=NAME, toplevel, skip: REASON")

    def where(self):
        return f"{self.path}:{self.line}"


def dedent(line, indent):
    """`line` of a block whose fence is indented by `indent` spaces."""
    if line[:indent].strip() == "":
        return line[indent:]
    return line.lstrip()


def blocks(path, language):
    """The code blocks of `language` ("cpp" or "python") in the Markdown file
    `path`, in order."""
    path = pathlib.Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    result = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        indent = len(fence.group("indent"))
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].lstrip().startswith("```"):
            end += 1
        if fence.group("lang").lower() in LANGUAGES[language]:
            marker = MARKER.match(lines[i - 1]) if i > 0 else None
            code = "\n".join(dedent(line, indent) for line in lines[start:end])
            result.append(Block(path, start + 1, code, marker.group("body") if marker else None))
        i = end + 1
    return result


def write_cpp(markdown_files, output):
    """One translation unit with every C++ block: each block is the body of
    a function (a member of its context's struct), defined out of line so
    that it is compiled and its calls are linked, never run."""
    includes = []
    bodies = []
    count = 0
    for path in markdown_files:
        for block in blocks(path, "cpp"):
            if block.skip_reason is not None:
                continue
            count += 1
            code_lines = []
            for line in block.code.split("\n"):
                if line.lstrip().startswith("#include"):
                    if line.strip() not in includes:
                        includes.append(line.strip())
                    code_lines.append("")  # keeps the #line numbering
                else:
                    code_lines.append(line)
            code = "\n".join(code_lines)
            location = f'#line {block.line} "{pathlib.Path(path).resolve()}"'
            name = f"Snippet{count}"
            if block.toplevel:
                bodies.append(f"// {block.where()}\nnamespace snippet{count} {{\n"
                              f"{location}\n{code}\n}}  // namespace snippet{count}\n")
                continue
            context = block.context or "Plain"
            bodies.append(f"// {block.where()}\nstruct {name} : {context} {{\n  void body();\n}};\n"
                          f"void {name}::body() {{\n{location}\n{code}\n}}\n")
    text = ["// Generated by tests/docs/doc_snippets.py from the docs' C++ blocks: do not edit.",
            '#include "snippet_contexts.h"']
    text += includes
    text += ["", "namespace hostir::doc_snippets {", ""]
    text += bodies
    text += ["}  // namespace hostir::doc_snippets", "",
             "// Compiled and linked, not run: the snippets need inputs, ranks, devices.",
             "int main() {", "  return 0;", "}", ""]
    output = pathlib.Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(text), encoding="utf-8")
    return count


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, help="the C++ file to write")
    parser.add_argument("markdown", nargs="+", help="Markdown files")
    args = parser.parse_args(argv)
    try:
        count = write_cpp(args.markdown, args.output)
    except ValueError as error:
        print(f"doc_snippets: {error}", file=sys.stderr)
        return 1
    print(f"doc_snippets: {count} C++ snippets -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
