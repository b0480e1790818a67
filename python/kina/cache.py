"""The opt-in on-disk compile cache (`kina.compile(..., cache_dir=...)`,
`kina.jit(..., cache_dir=...)`, or `$KINA_CACHE_DIR`).

An entry is keyed on everything a compile reads: the source text and its
file name (locations are part of the IR), the CPU as code generation sees
it (`_kina.host_cpu()`'s key: its model, vector width and caches), the
compiler itself (the bytes of the `_kina` extension, and the LLVM and
MLIR libraries it runs on, by path, size and time) and the options (the
matmul tuning file's bytes). A compile of the same inputs writes the same
bytes (the tests compare them), so a hit cannot change a result's bits.
An entry is the shared object and a JSON file with the IR at each stage
and the compiler's records (remarks, costs), written in that order, each
whole or not at all; the JSON marks the entry complete. An entry that
cannot be read is compiled again and replaced.
"""

import functools
import hashlib
import json
import os
import pathlib
import types

from . import _kina
from .files import atomic_writer

__all__ = ["default_directory", "entry_key", "load_entry", "store_entry"]

FORMAT = 1
ENVIRONMENT = "KINA_CACHE_DIR"


def default_directory():
    """$KINA_CACHE_DIR, or None: the cache is off unless asked for."""
    return os.environ.get(ENVIRONMENT) or None


@functools.lru_cache(maxsize=None)
def compiler_identity():
    """A digest of the compiler: the extension's bytes, and the path, size
    and modification time of each LLVM or MLIR library it has loaded."""
    digest = hashlib.sha256()
    with open(_kina.__file__, "rb") as extension:
        digest.update(extension.read())
    libraries = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if os.path.basename(path).startswith(("libLLVM", "libMLIR")):
                libraries.add(os.path.realpath(path))
    for path in sorted(libraries):
        stat = os.stat(path)
        digest.update(("%s %d %d\n" % (path, stat.st_size,
                                       stat.st_mtime_ns)).encode())
    return digest.hexdigest()


def entry_key(source, filename, matmul_tuning):
    tuning = None
    if matmul_tuning is not None:
        with open(matmul_tuning, "rb") as f:
            tuning = hashlib.sha256(f.read()).hexdigest()
    described = json.dumps({"format": FORMAT, "source": source,
                            "filename": filename,
                            "cpu": _kina.host_cpu()[0],
                            "compiler": compiler_identity(),
                            "matmul_tuning": tuning}, sort_keys=True)
    return hashlib.sha256(described.encode("utf-8",
                                           "surrogateescape")).hexdigest()


def _paths(directory, key):
    base = pathlib.Path(directory).expanduser() / key[:2] / key
    return base.with_suffix(".so"), base.with_suffix(".json")


def _plain(record):
    """A compiler record (pybind11 object) as JSON data."""
    if isinstance(record, (list, tuple)):
        return [_plain(r) for r in record]
    if isinstance(record, (bool, int, float, str)) or record is None:
        return record
    return {name: _plain(getattr(record, name)) for name in dir(record)
            if not name.startswith("_")}


def _attributes(data):
    """JSON data as objects with attributes, as the records read."""
    if isinstance(data, list):
        return [_attributes(d) for d in data]
    if isinstance(data, dict):
        return types.SimpleNamespace(**{k: _attributes(v)
                                        for k, v in data.items()})
    return data


def load_entry(directory, key):
    """(path of the shared object, its bytes, {stage: IR}, records), or
    None when the entry is missing or unreadable."""
    shared_object, meta = _paths(directory, key)
    try:
        with open(meta, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("format") != FORMAT or data.get("key") != key:
            return None
        with open(shared_object, "rb") as f:
            blob = f.read()
        if hashlib.sha256(blob).hexdigest() != data.get("shared_object"):
            return None
        return (shared_object, blob, data["ir"],
                _attributes(data["records"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store_entry(directory, key, blob, ir, records):
    shared_object, meta = _paths(directory, key)
    with atomic_writer(shared_object, permissions=0o755) as out:
        out.write(blob)
    with atomic_writer(meta, "w") as out:
        json.dump({"format": FORMAT, "key": key, "ir": ir,
                   "records": _plain(records),
                   "shared_object": hashlib.sha256(blob).hexdigest()}, out)
