#!/usr/bin/env python3
"""Issue 40's size limits: no function over 100 lines and no file over 700
lines in src/ (and no function over 100 lines in tools/ and python/'s C++),
so that a function is read at once and a file holds one idea.

A function is a brace block opened at namespace or class scope that is not a
class, namespace, enum or initializer: its body, from the line of its `{` to
the line of its `}`. Comments, string and character literals are blanked
first. Files listed in tests/lint/code_size_exceptions.txt may exceed the
file limit until they are split (each line: path and the reason); the list
may only shrink: a listed file now within the limit is an error too.

Usage: check_code_size.py SOURCE_DIR
"""
import pathlib
import re
import sys

FUNCTION_LIMIT = 100
FILE_LIMIT = 700
TOKENS = re.compile(r'R"(\w*)\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|'
                    r'//[^\n]*|/\*(?:.|\n)*?\*/')


def blank(text):
    """The text with comments and literals emptied, line numbers kept."""
    def keep_lines(match):
        token = match.group(0)
        stub = '""' if token[0] in 'R"' else "''" if token[0] == "'" else ""
        return stub + "\n" * token.count("\n")
    return TOKENS.sub(keep_lines, text)


def functions(path):
    """(first line, line count, head) of every function body in the file."""
    text = blank(path.read_text())
    stack, found, line, statement_start = [], [], 1, 0
    for i, char in enumerate(text):
        if char == "\n":
            line += 1
        elif char == "{":
            head = text[statement_start:i]
            outer = all(kind in ("namespace", "class") for kind, _, _ in stack)
            if re.search(r"\bnamespace\b[^;{}()]*$", head) or re.search(r'extern\s+""\s*$', head):
                kind = "namespace"
            elif outer and re.search(r"\b(class|struct|union)\b[^;{}()]*$", head):
                kind = "class"
            elif outer and not re.search(r"\benum\b", head) and not re.search(r"=\s*$", head):
                kind = "function"
            else:
                kind = "block"
            stack.append((kind, line, head.strip().splitlines()[-1] if head.strip() else ""))
            statement_start = i + 1
        elif char == "}":
            if not stack:
                raise SystemExit(f"{path}:{line}: unbalanced braces")
            kind, start, head = stack.pop()
            if kind == "function":
                found.append((start, line - start + 1, head))
            statement_start = i + 1
        elif char == ";":
            statement_start = i + 1
    return found


def main():
    root = pathlib.Path(sys.argv[1])
    exceptions_file = root / "tests/lint/code_size_exceptions.txt"
    exceptions = {}
    for entry in exceptions_file.read_text().splitlines():
        if entry.strip() and not entry.startswith("#"):
            path, _, reason = entry.partition(" ")
            exceptions[path] = reason.strip()
    errors = []
    sources = sorted(p for pattern in ("src/**/*.cpp", "src/**/*.h") for p in root.glob(pattern))
    for path in sources:
        relative = str(path.relative_to(root))
        lines = path.read_text().count("\n")
        if lines > FILE_LIMIT and relative not in exceptions:
            errors.append(f"{relative}: {lines} lines, over {FILE_LIMIT}: split it by idea")
        if lines <= FILE_LIMIT and relative in exceptions:
            errors.append(f"{relative}: {lines} lines, within the limit: remove it from "
                          f"{exceptions_file.relative_to(root)}")
    others = [p for pattern in ("tools/*.cpp", "python/*.cpp") for p in root.glob(pattern)]
    for path in sources + sorted(others):
        for start, count, head in functions(path):
            if count > FUNCTION_LIMIT:
                errors.append(f"{path.relative_to(root)}:{start}: a function of {count} lines, "
                              f"over {FUNCTION_LIMIT}: {head[:80]}")
    for path in exceptions:
        if not (root / path).exists():
            errors.append(f"{path}: listed in {exceptions_file.relative_to(root)} but gone")
    for error in errors:
        print("FAIL:", error)
    if errors:
        return 1
    print(f"ok: {len(sources)} files of src/ within {FILE_LIMIT} lines "
          f"({len(exceptions)} listed exceptions), every function within {FUNCTION_LIMIT} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
