"""Compile `.kina` text with kina-translate and call the result through
the plain C ABI with ctypes, as any C caller would (no kina bindings)."""

import ctypes
import json
import os
import pathlib
import subprocess

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("KINA_BIN", ROOT / "build" / "bin"))
DTYPES = {"f32": np.float32, "i32": np.int32, "i64": np.int64}


class SharedObject:
    def __init__(self, path):
        self.lib = ctypes.CDLL(str(path))
        self.lib.kina_module_signature.restype = ctypes.c_char_p
        self.signature = json.loads(self.lib.kina_module_signature())
        self.functions = {f["name"]: f for f in self.signature["functions"]}

    def call(self, name, *args):
        """Returns (status, result) of kina_<name>(args..., outs...): the
        result array, or a tuple of them for a function with several."""
        fn = self.functions[name]
        assert len(args) == len(fn["params"]), name
        arrays = []
        for arg, param in zip(args, fn["params"]):
            # np.require keeps 0-d arrays 0-d (ascontiguousarray would not).
            array = np.require(arg, DTYPES[param["dtype"]], "C")
            assert list(array.shape) == param["shape"], (name, param)
            arrays.append(array)
        outs = [np.full(r["shape"], np.nan if r["dtype"] == "f32" else 0,
                        dtype=DTYPES[r["dtype"]]) for r in fn["results"]]
        pointers = [a.ctypes.data_as(ctypes.c_void_p) for a in arrays + outs]
        entry = getattr(self.lib, "kina_" + name)
        entry.restype = ctypes.c_int32
        status = entry(*pointers)
        return status, outs[0] if len(outs) == 1 else tuple(outs)


def compile_file(source, directory, name="module"):
    output = pathlib.Path(directory) / (name + ".so")
    subprocess.run([str(BIN / "kina-translate"), "--kina-to-so", str(source),
                    "-o", str(output)], check=True)
    return SharedObject(output)


def compile_text(text, directory, name="module"):
    source = pathlib.Path(directory) / (name + ".kina")
    source.write_text(text)
    return compile_file(source, directory, name)
