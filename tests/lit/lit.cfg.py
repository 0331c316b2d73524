# lit configuration of the pass tests: a .hir file per pass (PASS.hir, and
# PASS_WHAT.hir for a second input), its input in
# the textual host IR (docs/lowering.md, "Textual host IR and `hostir
# opt`"), a host program or, for a presegmentation pass, a fusion, with RUN lines that run the pass with `hostir opt` and
# CHECK lines that FileCheck matches against what it prints.
#
# CTest runs the whole folder as `lit.suite` (tests/CMakeLists.txt) with
#   --param hostir=<the hostir binary> --param filecheck=<FileCheck>
#   --param output=<a folder of the build tree for lit's Output/>
import os

import lit.formats

config.name = "hostir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".hir"]
config.excludes = ["inputs"]
config.test_source_root = os.path.dirname(__file__)


def required_param(name):
    value = lit_config.params.get(name)
    if not value:
        lit_config.fatal("run lit with --param %s=PATH (tests/CMakeLists.txt passes it)" % name)
    return value


config.test_exec_root = required_param("output")
config.substitutions.append(("%hostir", required_param("hostir")))
config.substitutions.append(("FileCheck", required_param("filecheck")))
# Every pass runs with the verifier after it, as in the C++ tests.
config.environment["HOSTIR_VERIFY"] = "1"
