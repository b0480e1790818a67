"""The opt-in on-disk compile cache (kina.cache): a hit gives the module
a compile would (the same shared object bytes, IR, remarks and costs),
any change of an input misses, a damaged entry is compiled again, and a
new kina.jit object of a seen program compiles nothing."""

import numpy as np

import kina
import kina.numpy as knp

SOURCE = """@mesh([2])
fn f(x: Tensor[F32, [4, 8], @replicated], w: Tensor[F32, [8, 6], @sharded(axis=0)]) -> Tensor[F32, [4, 6], @replicated] {
  return tanh(x @ w)
}
"""


def arguments():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((4, 8), dtype=np.float32),
            rng.standard_normal((8, 6), dtype=np.float32))


def test_a_hit_is_the_module_a_compile_makes(tmp_path):
    fresh = kina.compile(SOURCE, "f.kina", cache_dir=tmp_path)
    cached = kina.compile(SOURCE, "f.kina", cache_dir=tmp_path)
    assert not fresh.from_cache and cached.from_cache
    assert cached._shared_object == fresh._shared_object
    for stage in kina.STAGES:
        assert cached.ir(stage) == fresh.ir(stage), stage
    assert cached.remarks == fresh.remarks and cached.remarks
    assert str(cached.cost("f")) == str(fresh.cost("f"))
    x, w = arguments()
    np.testing.assert_array_equal(cached.f(x, w), np.asarray(fresh.f(x, w)))
    np.testing.assert_allclose(cached.f(x, w), np.tanh(x @ w), rtol=1e-5,
                               atol=1e-6)
    assert cached.simulate("f", x, w).bytes_moved == \
        fresh.simulate("f", x, w).bytes_moved


def test_any_input_changed_misses(tmp_path):
    kina.compile(SOURCE, "f.kina", cache_dir=tmp_path)
    assert not kina.compile(SOURCE, "g.kina", cache_dir=tmp_path).from_cache
    assert not kina.compile(SOURCE.replace("tanh", "exp"), "f.kina",
                            cache_dir=tmp_path).from_cache
    assert len(list(tmp_path.glob("*/*.json"))) == 3


def test_a_damaged_entry_is_compiled_again(tmp_path):
    kina.compile(SOURCE, "f.kina", cache_dir=tmp_path)
    (shared_object,) = tmp_path.glob("*/*.so")
    shared_object.write_bytes(b"\x7fELF garbage")
    again = kina.compile(SOURCE, "f.kina", cache_dir=tmp_path)
    assert not again.from_cache
    x, w = arguments()
    np.testing.assert_allclose(again.f(x, w), np.tanh(x @ w), rtol=1e-5,
                               atol=1e-6)
    assert kina.compile(SOURCE, "f.kina", cache_dir=tmp_path).from_cache


def test_a_new_jit_of_a_seen_program_compiles_nothing(tmp_path):
    def forward(x, w):
        return knp.tanh(x @ w)

    x, w = arguments()
    first = kina.jit(forward, cache_dir=tmp_path)
    np.testing.assert_allclose(first(x, w), np.tanh(x @ w), rtol=1e-5,
                               atol=1e-6)
    second = kina.jit(forward, cache_dir=tmp_path)
    np.testing.assert_array_equal(second(x, w), first(x, w))
    assert (first.compile_count, first.cache_hits) == (1, 0)
    assert (second.trace_count, second.compile_count,
            second.cache_hits) == (1, 0, 1)
