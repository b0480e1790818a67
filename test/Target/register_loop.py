#!/usr/bin/env python3
"""What the matmul kernel's register loop does per step of K, from
`llvm-objdump -d` of one function: the innermost loop (a backward
conditional branch) with the most FMAs, its instructions counted by kind
and divided by the steps of K it holds (its FMAs over --fmas-per-step).

    register_loop.py DISASSEMBLY --fmas-per-step 12 [--max-integer N]
        [--mca CPU --fma-units U --mca-slack S --llvm-mca PATH]

Prints one line per count and exits 1 when the loop carries more integer
instructions per step than --max-integer, or any multiply or division
(the next-block prefetch address advances by a constant).

With --mca, llvm-mca's cycles per step of K for CPU (its scheduling model,
not a measurement) beside the bound of the FMAs alone (--fmas-per-step /
--fma-units), and exit 1 when they exceed the bound by more than the
fraction --mca-slack: a regression guard for CPUs the host is not."""

import argparse
import re
import subprocess
import sys
import tempfile
from collections import Counter

INSTRUCTION = re.compile(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)")
MULTIPLY_OR_DIVIDE = re.compile(r"^(i?mul|mulx|i?div)")


def kind(opcode):
    # A multiply-add: an FMA, or a BF16 kernel's pair dot product.
    if opcode.startswith(("vfmadd", "vdpbf16ps")):
        return "fma"
    if opcode.startswith("vbroadcast"):
        return "broadcast"
    if opcode.startswith(("vmov", "vpbroadcast")):
        return "vector move"
    if opcode.startswith("prefetch"):
        return "prefetch"
    if opcode.startswith("nop"):
        return "nop"
    return "integer"


def loops(instructions):
    """(start, end) of each loop closed by a backward conditional branch."""
    for address, opcode, operands in instructions:
        target = re.match(r"0x([0-9a-f]+)", operands)
        if opcode.startswith("j") and opcode != "jmp" and target:
            start = int(target.group(1), 16)
            if start < address:
                yield start, address


def mca_cycles_per_iteration(body, cpu, mca):
    """`mca`'s cycles per iteration of the loop `body` (objdump's AT&T
    lines) on `cpu`: the closing branch aimed at a label, addresses'
    annotations dropped."""
    lines = ["loop:"]
    for opcode, operands in body[:-1]:
        operands = re.sub(r"\s*(#|<).*", "", operands)
        lines.append("  %s %s" % (opcode, operands))
    lines.append("  %s loop" % body[-1][0])
    iterations = 200
    with tempfile.NamedTemporaryFile("w", suffix=".s") as source:
        source.write("\n".join(lines) + "\n")
        source.flush()
        report = subprocess.run(
            [mca, "-mtriple=x86_64-unknown-linux-gnu", "-mcpu=" + cpu,
             "-iterations=%d" % iterations, source.name],
            check=True, capture_output=True, text=True).stdout
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", report).group(1))
    return cycles / iterations


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("disassembly")
    parser.add_argument("--fmas-per-step", type=int, required=True)
    parser.add_argument("--max-integer", type=float, default=1.0)
    parser.add_argument("--mca", metavar="CPU")
    parser.add_argument("--fma-units", type=int, default=2)
    parser.add_argument("--mca-slack", type=float, default=0.05)
    parser.add_argument("--llvm-mca", default="llvm-mca")
    args = parser.parse_args()
    instructions = []
    with open(args.disassembly) as f:
        for line in f:
            m = INSTRUCTION.match(line)
            if m:
                instructions.append((int(m.group(1), 16), m.group(2),
                                     m.group(3)))
    spans = list(loops(instructions))
    # Innermost: no other loop inside it.
    innermost = [(a, b) for a, b in spans
                 if not any(a <= c and d <= b and (c, d) != (a, b)
                            for c, d in spans)]
    best = None
    for a, b in innermost:
        body = [(op, ops) for addr, op, ops in instructions if a <= addr <= b]
        counts = Counter(kind(op) for op, _ in body)
        if counts["fma"] and (not best or counts["fma"] > best[0]["fma"]):
            best = counts, body
    if not best:
        sys.exit("register_loop.py: no loop with FMAs")
    counts, body = best
    steps = counts["fma"] / args.fmas_per_step
    muldiv = sum(bool(MULTIPLY_OR_DIVIDE.match(op)) for op, _ in body)
    print("steps of K per iteration: %g" % steps)
    for name in ("fma", "broadcast", "vector move", "prefetch", "integer"):
        print("per step: %.2f %s" % (counts[name] / steps, name))
    print("multiplies and divisions per step: %.3f" % (muldiv / steps))
    failed = False
    if args.mca:
        cycles = mca_cycles_per_iteration(body, args.mca,
                                          args.llvm_mca) / steps
        bound = args.fmas_per_step / args.fma_units
        print("llvm-mca -mcpu=%s: %.2f cycles per step of K, FMA bound %.2f"
              % (args.mca, cycles, bound))
        if cycles > bound * (1 + args.mca_slack):
            print("the loop is %.0f%% over the FMA bound" %
                  (100 * (cycles / bound - 1)))
            failed = True
    if counts["integer"] / steps > args.max_integer:
        print("too many integer instructions per step of K")
        failed = True
    if muldiv:
        print("a multiply or division in the register loop")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
