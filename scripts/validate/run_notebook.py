#!/usr/bin/env python3
"""Executes a notebook headless (nbconvert's ExecutePreprocessor with the
python3 kernel) and exits non-zero if any cell raises. The notebook on disk
is left as committed (without outputs); pass --save OUT to keep the run."""

import argparse
import os
import pathlib
import sys

import nbformat
from nbconvert.preprocessors import CellExecutionError, ExecutePreprocessor

parser = argparse.ArgumentParser()
parser.add_argument("notebook")
parser.add_argument("--save", help="write the executed notebook here")
args = parser.parse_args()

os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # kernel noise
notebook = nbformat.read(args.notebook, as_version=4)
runner = ExecutePreprocessor(timeout=300, kernel_name="python3")
try:
    # In the notebook's own directory, as Jupyter runs it.
    directory = pathlib.Path(args.notebook).resolve().parent
    runner.preprocess(notebook, {"metadata": {"path": str(directory)}})
except CellExecutionError as error:
    print(error)
    print("0 passed, 1 failed")
    sys.exit(1)
if args.save:
    nbformat.write(notebook, args.save)
cells = sum(1 for c in notebook.cells if c.cell_type == "code")
print("executed %d code cells of %s without error" % (cells, args.notebook))
