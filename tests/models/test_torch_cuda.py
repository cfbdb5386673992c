"""Mult-VAE and NeuMF with ``device="cuda"``: skipped on a machine without a CUDA GPU.

The same small settings as the CPU tests (``test_torch_models.FAST``). CUDA runs are seeded but,
by design of :func:`~itemsampling.models._torch.torch_session`, reproducible only up to the
summation order of the GPU kernels, so they are compared with the CPU fit by quality, and with
each other and with a CPU copy of the fitted weights to float32 rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from itemsampling.models.popularity import Popularity

from .test_torch_models import FAST, recall_at_10

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(scope="module")
def on_gpu(planted):
    return {name: make(device="cuda").fit(planted.train, seed=3, progress=False) for name, make in FAST.items()}


@pytest.fixture(scope="module")
def on_cpu(planted):
    return {name: make(num_threads=1).fit(planted.train, seed=3, progress=False) for name, make in FAST.items()}


@pytest.mark.parametrize("name", sorted(FAST))
def test_cuda_fit_keeps_its_weights_on_the_gpu_and_scores_to_host_arrays(name, on_gpu, planted):
    model = on_gpu[name]
    assert model.device == "cuda"
    assert {p.device.type for p in model.module_.parameters()} == {"cuda"}
    users = np.array([5, 0, 399, 5, 17])
    scores = model.score(users)
    assert isinstance(scores, np.ndarray) and scores.shape == (5, planted.n_items) and scores.dtype == np.float32
    assert np.isfinite(scores).all()
    np.testing.assert_array_equal(scores[0], scores[3])


@pytest.mark.parametrize("name", sorted(FAST))
def test_cuda_fit_learns_as_well_as_the_cpu_fit(name, on_gpu, on_cpu, planted):
    popularity = recall_at_10(Popularity().fit(planted.train), planted)
    gpu, cpu = recall_at_10(on_gpu[name], planted), recall_at_10(on_cpu[name], planted)
    assert gpu > popularity + 0.2, (gpu, popularity)
    assert abs(gpu - cpu) < 0.1, (gpu, cpu)


@pytest.mark.parametrize("name", sorted(FAST))
def test_cuda_fit_with_the_same_seed_agrees_to_rounding(name, on_gpu, planted):
    users = np.arange(planted.n_users)
    again = FAST[name](device="cuda").fit(planted.train, seed=3, progress=False)
    np.testing.assert_allclose(again.score(users), on_gpu[name].score(users), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", sorted(FAST))
def test_cuda_weights_move_to_the_cpu_and_back(name, on_gpu, planted):
    users = np.arange(0, planted.n_users, 7)
    gpu = on_gpu[name]
    on_host = FAST[name](num_threads=1).load_state(planted.train, gpu.state())
    assert {p.device.type for p in on_host.module_.parameters()} == {"cpu"}
    np.testing.assert_allclose(on_host.score(users), gpu.score(users), rtol=1e-4, atol=1e-5)
    back = FAST[name](device="cuda").load_state(planted.train, on_host.state())
    np.testing.assert_array_equal(back.score(users), gpu.score(users))


@pytest.mark.parametrize("name", sorted(FAST))
def test_cuda_fit_leaves_the_global_cuda_random_state_alone(name, planted):
    before = torch.cuda.get_rng_state()
    FAST[name](device="cuda", n_epochs=1).fit(planted.train, seed=0, progress=False)
    assert torch.equal(torch.cuda.get_rng_state(), before)
    assert not torch.are_deterministic_algorithms_enabled()


def test_auto_picks_the_gpu():
    assert FAST["neumf"](device="auto").device == "cuda"
