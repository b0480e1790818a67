#!/usr/bin/env python3
"""Compares two functions of printed MLIR modulo SSA names, argument names
and the order of independent ops: each value is named by a hash of its op
(name, attributes, types) and of its operands' names, arguments by their
position, so two functions compare equal exactly when they compute the
same expression DAG (after CSE) with the same signature.

    compare_ir.py A.mlir fnA B.mlir fnB

Prints `equal` and exits 0, or says what differs and exits 1."""

import hashlib
import re
import sys

VALUE = re.compile(r"%[A-Za-z0-9_.$-]+")


def function(text, name):
    """The signature's types and the body's lines of func.func @name."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"\s*func\.func (?:private )?@%s\(" % re.escape(name),
                    line):
            header = re.sub(r"\{[^{}]*\}", "", line)  # argument attributes
            header = header.replace(" attributes", "")
            signature = re.sub(r"%arg\d+:\s*", "", header.split("(", 1)[1])
            body = []
            for body_line in lines[i + 1:]:
                if body_line.strip() == "}":
                    return signature.strip(" {"), body
                body.append(body_line.strip())
    sys.exit("compare_ir.py: no function @%s" % name)


def canonical(text, name):
    signature, body = function(text, name)
    names = {}

    def rename(match):
        value = match.group(0)
        argument = re.fullmatch(r"%arg(\d+)", value)
        if argument:
            return "arg#" + argument.group(1)
        if value not in names:
            sys.exit("compare_ir.py: %s is used before it is defined" % value)
        return names[value]

    returned = None
    for line in body:
        result = re.match(r"(%[A-Za-z0-9_.$-]+)(?::\d+)? = (.*)", line)
        if result:
            key = VALUE.sub(rename, result.group(2))
            names[result.group(1)] = hashlib.sha1(key.encode()).hexdigest()[:16]
        elif line.startswith("return"):
            returned = VALUE.sub(rename, line)
    return signature, returned


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    a = canonical(open(sys.argv[1]).read(), sys.argv[2])
    b = canonical(open(sys.argv[3]).read(), sys.argv[4])
    if a[0] != b[0]:
        print("signatures differ:\n  %s\n  %s" % (a[0], b[0]))
        sys.exit(1)
    if a[1] != b[1]:
        print("the returned values are computed differently")
        sys.exit(1)
    print("equal")


if __name__ == "__main__":
    main()
