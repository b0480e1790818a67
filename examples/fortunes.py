"""Real English text for training: the fortunes of Debian's `fortunes`
package (/usr/share/games/fortunes), as bytes (a vocabulary of 256): the
training application's data (train_gpt.py, train.ipynb, beside it).

    import fortunes
    train, held = fortunes.split(fortunes.load())   # int64 byte arrays
    ids, targets = fortunes.batch(train, cfg, rng)  # [B, T] each
"""

import pathlib

import numpy as np

DIRECTORY = pathlib.Path("/usr/share/games/fortunes")
# Pictures, not prose.
SKIPPED = {"art", "ascii-art"}
VOCABULARY = 256
HELD_OUT = 0.05


class MissingText(RuntimeError):
    """The fortunes are not installed (or hold no text)."""


def load(directory=DIRECTORY):
    """Every fortune of `directory`'s text files, as bytes."""
    directory = pathlib.Path(directory)
    if not directory.is_dir():
        raise MissingText("%s not found: install the Debian package "
                          "'fortunes' (scripts/install-deps.sh does)"
                          % directory)
    texts = []
    for path in sorted(directory.iterdir()):
        if path.suffix in (".dat", ".u8") or path.name in SKIPPED or \
                not path.is_file():
            continue
        for text in path.read_bytes().split(b"\n%\n"):
            text = text.strip()
            if text:
                texts.append(text + b"\n\n")
    if not texts:
        raise MissingText("no fortunes in %s" % directory)
    return texts


def split(texts, seed=0):
    """Training and held-out bytes (int64 arrays): a shuffled HELD_OUT
    share of the fortunes is held out whole."""
    order = np.random.default_rng(seed).permutation(len(texts))
    cut = max(1, int(len(texts) * HELD_OUT))
    held = b"".join(texts[i] for i in order[:cut])
    train = b"".join(texts[i] for i in order[cut:])
    as_array = lambda data: np.frombuffer(data, dtype=np.uint8).astype(
        np.int64)
    return as_array(train), as_array(held)


def batch(data, cfg, rng):
    """cfg.b windows of cfg.t + 1 bytes at random places: the inputs and
    the next byte of each."""
    starts = rng.integers(0, len(data) - cfg.t - 1, cfg.b)
    windows = np.stack([data[s:s + cfg.t + 1] for s in starts])
    return windows[:, :-1], windows[:, 1:]
