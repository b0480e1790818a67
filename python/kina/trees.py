"""Pytrees: dicts, lists, tuples, namedtuples and dataclasses of arrays,
flattened by key path as `jax.tree_util` flattens them (dict keys in
sorted order; None is an empty subtree), and the parameter names
`kina.jit` gives their leaves.

    leaves, treedef, paths = flatten({"w": w, "b": [b0, b1]})
    tree = unflatten(treedef, leaves)
    kina.tree_map(lambda p, g: p - 0.1 * g, params, grads)
"""

import dataclasses
import re

import numpy as np

from . import _kina

__all__ = ["flatten", "unflatten", "keystr", "leaf_name", "tree_flatten",
           "tree_leaves", "tree_map", "tree_structure", "tree_unflatten"]


# Types that are always leaves (a cached call flattens its arguments on
# every call: these skip the container checks).
_LEAF_TYPES = frozenset((np.ndarray, np.float32, np.float64, np.float16,
                         np.uint16, np.int32, np.int64, float, int))


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:  # keys of several types: by type, then value
        return sorted(d, key=lambda k: (type(k).__name__, repr(k)))


def _children(node):
    """(kind, node's children with their path entries) for an inner node;
    None for a leaf. Path entries: ("key", k), ("index", i), ("attr", a)."""
    if type(node) in _LEAF_TYPES:  # the common leaves, at once
        return None
    if node is None:
        return ("none",), []
    if isinstance(node, dict):
        keys = _sorted_keys(node)
        return ("dict", tuple(keys)), [(("key", k), node[k]) for k in keys]
    if isinstance(node, tuple) and hasattr(node, "_fields"):
        return (("namedtuple", type(node), tuple(node._fields)),
                [(("attr", f), getattr(node, f)) for f in node._fields])
    if isinstance(node, (list, tuple)):
        return ((type(node).__name__, len(node)),
                [(("index", i), c) for i, c in enumerate(node)])
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        names = tuple(f.name for f in dataclasses.fields(node))
        return (("dataclass", type(node), names),
                [(("attr", f), getattr(node, f)) for f in names])
    return None


def flatten(tree):
    """(leaves, treedef, paths): the leaves in order, a hashable
    description of the structure, and each leaf's key path (a tuple of
    path entries)."""
    leaves, paths = [], []

    def walk(node, path):
        children = _children(node)
        if children is None:
            leaves.append(node)
            paths.append(path)
            return ("leaf",)
        kind, entries = children
        return (kind, tuple(walk(child, path + (entry,))
                            for entry, child in entries))

    treedef = walk(tree, ())
    return leaves, treedef, paths


def unflatten(treedef, leaves):
    """The tree of `treedef` with `leaves` in flatten's order."""
    leaves = iter(leaves)

    def build(definition):
        kind = definition[0]
        if kind == "leaf":
            return next(leaves)
        children = [build(child) for child in definition[1]]
        if kind == ("none",):
            return None
        if kind[0] == "dict":
            return dict(zip(kind[1], children))
        if kind[0] == "namedtuple":
            return kind[1](*children)
        if kind[0] == "dataclass":
            return _dataclass(kind[1], dict(zip(kind[2], children)))
        return list(children) if kind[0] == "list" else tuple(children)

    return build(treedef)


def _dataclass(cls, values):
    """An instance of dataclass `cls` with these field values: the init
    fields through its constructor, the others (`field(init=False)`) set
    after it, as a frozen dataclass's own __init__ sets them."""
    init = {f.name for f in dataclasses.fields(cls) if f.init}
    instance = cls(**{k: v for k, v in values.items() if k in init})
    for name, value in values.items():
        if name not in init:
            object.__setattr__(instance, name, value)
    return instance


def tree_flatten(tree):
    """(leaves, treedef), as jax.tree_util.tree_flatten."""
    leaves, treedef, _ = flatten(tree)
    return leaves, treedef


def tree_unflatten(treedef, leaves):
    return unflatten(treedef, leaves)


def tree_leaves(tree):
    return flatten(tree)[0]


def tree_structure(tree):
    return flatten(tree)[1]


def keystr(path, root=""):
    """`params['blocks'][3].wq`, as JAX prints a key path."""
    text = root
    for kind, key in path:
        text += ("." + key if kind == "attr" else "[%r]" % (key,))
    return text or "the tree itself"


def describe(treedef):
    """A short readable form of a structure, for error messages."""
    kind = treedef[0]
    if kind == "leaf":
        return "*"
    inner = ", ".join(describe(child) for child in treedef[1])
    if kind == ("none",):
        return "None"
    if kind[0] == "dict":
        return "{" + ", ".join("%r: %s" % (k, describe(c))
                               for k, c in zip(kind[1], treedef[1])) + "}"
    if kind[0] in ("namedtuple", "dataclass"):
        return "%s(%s)" % (kind[1].__name__, inner)
    return ("[%s]" if kind[0] == "list" else "(%s)") % inner


def first_difference(a, b, path=()):
    """The key path where structures `a` and `b` first differ, or None."""
    if a == b:
        return None
    if a[0] != b[0] or a[0] == "leaf" or len(a[1]) != len(b[1]):
        return path
    for (entry, child_a, child_b) in zip(_entries(a), a[1], b[1]):
        found = first_difference(child_a, child_b, path + (entry,))
        if found is not None:
            return found
    return path


def _entries(treedef):
    kind = treedef[0]
    if kind[0] == "dict":
        return [("key", k) for k in kind[1]]
    if kind[0] in ("namedtuple", "dataclass"):
        return [("attr", f) for f in kind[2]]
    return [("index", i) for i in range(len(treedef[1]))]


def tree_map(f, tree, *rest):
    """`f` applied to each leaf of `tree` (and the leaves at the same key
    paths of `rest`, which must have its structure), as a tree of the
    same structure."""
    leaves, treedef, paths = flatten(tree)
    others = []
    for i, other in enumerate(rest):
        other_leaves, other_def, _ = flatten(other)
        if other_def != treedef:
            where = first_difference(treedef, other_def)
            raise ValueError(
                "tree_map: tree %d differs from the first at %s: %s against "
                "%s" % (i + 1, keystr(where), describe(other_def),
                        describe(treedef)))
        others.append(other_leaves)
    return unflatten(treedef, [f(*args) for args in zip(leaves, *others)])


# A key that stays as it is in a name; any other is escaped, `_` and the
# hex of its UTF-8 bytes. Components join with `__`, which no kept key
# contains and no escaped one ends or starts with besides its own `_`:
# so ['a']['b'] (`a__b`), ['a_b'] (`a_b`) and ['a__b'] (`_615f5f62`)
# never meet.
_KEPT_KEY = re.compile(r"[A-Za-z0-9]+(_[A-Za-z0-9]+)*\Z")
_reserved_words = None


def _component(key):
    text = str(key)
    if _KEPT_KEY.match(text):
        return text
    return "_" + text.encode("utf-8", "surrogateescape").hex()


def reserved_words():
    """The language's keywords, element types and op names."""
    global _reserved_words
    if _reserved_words is None:
        _reserved_words = frozenset(_kina.reserved_words())
    return _reserved_words


def leaf_name(root, path):
    """The `.kina` parameter name of the leaf at `path` of the argument
    named `root`: `params['blocks'][3]['wq']` is `params__blocks__3__wq`."""
    components = [_component(root)] + [_component(key) for _, key in path]
    if len(components) == 1 and (components[0] in reserved_words() or
                                 components[0][0].isdigit()):
        components[0] = "_" + components[0].encode().hex()
    return "__".join(components)
