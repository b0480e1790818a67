# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "KINA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".kina", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kina_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%kina_src", config.kina_src_root))
config.substitutions.append(("%kina_tools_dir", config.kina_tools_dir))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%cmake", config.cmake_command))
config.environment["PYTHONPATH"] = os.path.join(config.kina_obj_root, "python")

llvm_config.with_system_env_vars_as_needed = False
llvm_config.use_default_substitutions()

# The stock mlir-opt of the pinned LLVM, to prove lowered IR is upstream-only.
config.substitutions.append(
    ("%stock-mlir-opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))

config.substitutions.append(
    ("%clang", os.path.join(config.llvm_tools_dir, "clang")))

tool_dirs = [config.kina_tools_dir, config.llvm_tools_dir]
tools = ["kina-opt", "kina-translate", "kina-abi-check", "FileCheck", "not",
         "count",
         "llvm-readelf", "llvm-nm", "llvm-mca"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], tool_dirs)
