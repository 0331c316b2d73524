"""C++ users' packaging: `cmake --install` exports the hostir CMake package
and installs bin/hostir (with lib/hostir/libhostir_commands.so, which it
loads for the commands that run programs); tests/package builds examples/*.cpp against the
installed copy with find_package(hostir) + hostir::runtime and no
CMAKE_CXX_STANDARD of its own (hostir::core carries cxx_std_20), then runs
them."""

import pathlib
import shutil
import subprocess

import pytest

from conftest import build_dir

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_examples_build_against_installed_package(tmp_path):
    build = build_dir()
    if not (build / "CMakeCache.txt").exists() or shutil.which("cmake") is None:
        pytest.skip(f"no CMake build folder at {build}")
    prefix = tmp_path / "install"
    install = subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix)],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    assert (prefix / "lib" / "cmake" / "hostir" / "hostirConfig.cmake").exists()
    assert (prefix / "include" / "hostir" / "ir" / "arith.h").exists()
    # The CLI and its launcher are installed, and run from there.
    installed_cli = prefix / "bin" / "hostir"
    assert installed_cli.exists()
    passes = subprocess.run([str(installed_cli), "passes"], capture_output=True, text=True,
                            timeout=60)
    assert passes.returncode == 0 and "loop_host_units" in passes.stdout, passes.stderr
    # A command that runs a program loads lib/hostir/libhostir_commands.so
    # (tools/command_library.cpp).
    run = subprocess.run([str(installed_cli), "run", "stream_set", "-n", "1"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "PASSED" in run.stdout, run.stdout + run.stderr
    assert (prefix / "lib" / "hostir" / "libhostir_commands.so").exists()
    package_build = tmp_path / "build"
    configure = subprocess.run(
        ["cmake", "-S", str(ROOT / "tests" / "package"), "-B", str(package_build), "-G",
         "Ninja", "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"],
        capture_output=True, text=True, timeout=300)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    compile_ = subprocess.run(["cmake", "--build", str(package_build), "-j", "2"],
                              capture_output=True, text=True, timeout=1200)
    assert compile_.returncode == 0, compile_.stdout + compile_.stderr
    examples = sorted((ROOT / "examples").glob("*.cpp"))
    assert examples
    for source in examples:
        program = package_build / source.stem
        run = subprocess.run([str(program)], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, f"{program}: {run.stdout}{run.stderr}"
