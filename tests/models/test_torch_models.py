"""Mult-VAE and NeuMF: quality on planted data, determinism, annealing, negative sampling, I/O."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from itemsampling.models import _torch, neumf
from itemsampling.models.multivae import MultiVAE, kl_weight
from itemsampling.models.neumf import NeuMF, sample_negatives
from itemsampling.models.popularity import Popularity
from itemsampling.ranks import global_ranks

# Small but complete settings: about a second of CPU each on the 400 x 120 planted data.
FAST = {
    "multivae": lambda **kw: MultiVAE(n_epochs=kw.pop("n_epochs", 30), batch_size=25, lr=3e-3,
                                      hidden_dim=64, latent_dim=16, **kw),
    "neumf": lambda **kw: NeuMF(n_epochs=kw.pop("n_epochs", 6), batch_size=256, lr=1e-2,
                                n_factors=8, mlp_layers=(16, 8), **kw),
}


def recall_at_10(model, dataset) -> float:
    """Recall@10 of the held-out items among each user's unseen items (ties broken at random)."""
    ranks = global_ranks(model, dataset.test_items, protocols=["unseen"], seed=0)["unseen"]["rank"]
    return float(np.mean(ranks <= 10))


@pytest.fixture(scope="module")
def fitted(planted):
    return {name: make(num_threads=1).fit(planted.train, seed=3, progress=False)
            for name, make in FAST.items()}


@pytest.mark.parametrize("name", sorted(FAST))
def test_beats_popularity_on_planted_structure(name, fitted, planted):
    popularity = recall_at_10(Popularity().fit(planted.train), planted)
    model = recall_at_10(fitted[name], planted)
    # planted factors dominate the mild popularity skew: a personalised model must do far better
    # (measured: popularity 0.19, both models about 0.66)
    assert model > popularity + 0.2, (model, popularity)


@pytest.mark.parametrize("name", sorted(FAST))
def test_same_seed_same_scores(name, fitted, planted):
    users = np.arange(planted.n_users)
    again = FAST[name](num_threads=1).fit(planted.train, seed=3, progress=False)
    np.testing.assert_array_equal(again.score(users), fitted[name].score(users))
    other = FAST[name](num_threads=1, n_epochs=2).fit(planted.train, seed=4, progress=False)
    same = FAST[name](num_threads=1, n_epochs=2).fit(planted.train, seed=3, progress=False)
    assert not np.array_equal(other.score(users), same.score(users))


@pytest.mark.parametrize("name", sorted(FAST))
def test_score_shape_dtype_and_batching(name, fitted, planted, monkeypatch):
    model = fitted[name]
    users = np.array([5, 0, 399, 5, 17])
    scores = model.score(users)
    assert scores.shape == (5, planted.n_items) and scores.dtype == np.float32
    assert np.isfinite(scores).all()
    np.testing.assert_array_equal(scores[0], scores[3])
    assert model.score(np.array([], dtype=np.int64)).shape == (0, planted.n_items)
    monkeypatch.setattr(model, "_score_batch_size", lambda: 2)  # three batches, the last short
    np.testing.assert_allclose(model.score(users), scores, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(FAST))
def test_state_round_trip(name, fitted, planted):
    model = fitted[name]
    restored = FAST[name]().load_state(planted.train, model.state())
    users = np.arange(0, planted.n_users, 7)
    np.testing.assert_array_equal(restored.score(users), model.score(users))
    state = model.state()
    state.pop(next(iter(state)))
    with pytest.raises(ValueError, match="lacks"):
        FAST[name]().load_state(planted.train, state)


@pytest.mark.parametrize("name", sorted(FAST))
def test_fit_leaves_global_torch_state_alone(name, planted):
    torch.set_num_threads(2)
    before = torch.random.get_rng_state()
    FAST[name](num_threads=1, n_epochs=1).fit(planted.train, seed=0, progress=False)
    assert torch.get_num_threads() == 2
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.equal(torch.random.get_rng_state(), before)


# --- threads ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("omp", "affinity", "cpu_count", "explicit", "expected"), [
    ("3", {0, 1}, 8, None, 3),  # the environment variable wins over the cores
    (" 1,4 ", {0, 1}, 8, None, 1),  # per-level list: the outer level
    (None, {0, 2, 5}, 8, None, 3),  # else the cores this process may use, not all the machine's
    ("", {0, 2, 5}, 8, None, 3),  # an empty variable counts as unset
    ("3", {0, 1}, 8, 5, 5),  # an explicit count wins over everything
    (None, None, 6, None, 6),  # no affinity on this platform: all cores
    (None, None, None, None, 1),  # nothing known: one thread
])
def test_resolve_num_threads(monkeypatch, omp, affinity, cpu_count, explicit, expected):
    if omp is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", omp)
    if affinity is None:
        monkeypatch.delattr(_torch.os, "sched_getaffinity", raising=False)
    else:
        monkeypatch.setattr(_torch.os, "sched_getaffinity", lambda pid: set(affinity), raising=False)
    monkeypatch.setattr(_torch.os, "cpu_count", lambda: cpu_count)
    assert _torch.resolve_num_threads(explicit) == expected


def test_torch_environment_names_version_kernels_and_the_resolved_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    record = _torch.torch_environment()
    assert record == {"version": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
                      "threads": 3}
    assert _torch.torch_environment(5)["threads"] == 5
    assert record["cpu_capability"] in {"DEFAULT", "NO AVX", "AVX2", "AVX512", "ZVECTOR", "VSX", "SVE256"}


@pytest.mark.parametrize("omp", ["0", "two", "-1", "2.5"])
def test_resolve_num_threads_rejects_a_bad_environment(monkeypatch, omp):
    monkeypatch.setenv("OMP_NUM_THREADS", omp)
    with pytest.raises(ValueError, match="OMP_NUM_THREADS"):
        _torch.resolve_num_threads()
    assert _torch.resolve_num_threads(2) == 2  # not consulted when the count is given


@pytest.mark.parametrize("name", sorted(FAST))
@pytest.mark.parametrize(("omp", "explicit", "expected"), [("1", None, 1), ("3", None, 3), ("1", 2, 2)])
def test_fit_and_score_use_the_resolved_threads(name, planted, monkeypatch, omp, explicit, expected):
    monkeypatch.setenv("OMP_NUM_THREADS", omp)
    model = FAST[name](num_threads=explicit, n_epochs=1)
    seen = []
    train, score_batch = model._train, model._score_batch
    monkeypatch.setattr(model, "_train", lambda *a: (seen.append(torch.get_num_threads()), train(*a)))
    monkeypatch.setattr(model, "_score_batch",
                        lambda users: (seen.append(torch.get_num_threads()), score_batch(users))[1])
    torch.set_num_threads(4)
    try:
        model.fit(planted.train, seed=0, progress=False).score(np.arange(3))
        assert torch.get_num_threads() == 4  # restored after fitting and scoring
    finally:
        torch.set_num_threads(2)
    assert seen == [expected, expected]
    assert model.hyperparameters["num_threads"] == explicit  # the setting, not its value here


# --- Mult-VAE: KL annealing ------------------------------------------------------------------


def test_kl_weight_is_linear_and_reaches_the_cap_exactly():
    total, cap = 37, 0.2
    expected = np.linspace(0.0, cap, total + 1)  # β at updates 0..total, drawn independently
    got = np.array([kl_weight(s, total, cap) for s in range(total + 1)])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    assert kl_weight(total, total, cap) == cap
    assert kl_weight(total - 1, total, cap) < cap
    assert all(kl_weight(s, total, cap) == cap for s in range(total, 3 * total))


def test_training_follows_the_anneal_schedule(planted):
    # 400 users in batches of 100: 4 updates per epoch; β reaches the cap after 8 updates.
    model = MultiVAE(n_epochs=3, batch_size=100, hidden_dim=16, latent_dim=4, beta_max=0.3,
                     total_anneal_steps=8, num_threads=1).fit(planted.train, seed=0, progress=False)
    assert [h["kl_weight"] for h in model.history_] == [0.3 * 4 / 8, 0.3, 0.3]
    # default: anneal over the whole run, so the last update uses exactly beta_max
    model = MultiVAE(n_epochs=3, batch_size=150, hidden_dim=16, latent_dim=4,
                     num_threads=1).fit(planted.train, seed=0, progress=False)
    betas = [h["kl_weight"] for h in model.history_]
    assert betas[:2] == pytest.approx([0.2 * 3 / 9, 0.2 * 6 / 9], rel=1e-12) and betas[2] == 0.2


def test_multivae_scores_are_the_decoded_posterior_mean(fitted, planted):
    """Eval-mode scoring = decoder at μ of the normalised, not dropped-out input (dense check)."""
    net = fitted["multivae"].module_
    users = np.arange(10)
    x = torch.from_numpy(planted.train[users].toarray())
    x = x / x.norm(dim=1, keepdim=True)
    h = torch.tanh(x @ net.encoder_hidden.weight + net.encoder_hidden_bias)
    mu = net.encoder_out(h)[:, : net.latent_dim]
    expected = net.decoder_out(torch.tanh(net.decoder_hidden(mu))).detach().numpy()
    np.testing.assert_allclose(fitted["multivae"].score(users), expected, rtol=1e-4, atol=1e-5)


# --- NeuMF: negatives and vectorised scoring ---------------------------------------------------


def test_negatives_are_never_positives_and_uniform():
    dense = (np.random.default_rng(0).random((50, 12)) < 0.6).astype(np.float32)
    dense[dense.all(axis=1), 0] = 0  # every user needs a free item
    dense[3] = 0  # a user with no positives
    dense[4] = np.arange(12) != 11  # a user whose only free item is 11
    train = sp.csr_matrix(dense)
    users = np.repeat(np.arange(50), 400)
    items = sample_negatives(train, users, np.random.default_rng(1))
    assert items.dtype == np.int64 and items.shape == users.shape
    assert not np.asarray(train[users, items]).any()
    # user 0: each of its non-interacted items about equally often (binomial, 5 sigma)
    free = np.flatnonzero(train[0].toarray().ravel() == 0)
    counts = np.bincount(items[users == 0], minlength=12)[free]
    p = 1 / free.size
    assert np.all(np.abs(counts - 400 * p) < 5 * np.sqrt(400 * p * (1 - p)))
    assert np.all(items[users == 4] == 11)
    np.testing.assert_array_equal(items, sample_negatives(train, users, np.random.default_rng(1)))


def test_negatives_need_a_free_item():
    train = sp.csr_matrix(np.array([[1, 1, 1], [1, 0, 0]], dtype=np.float32))
    with pytest.raises(ValueError, match="interacted with all 3 items"):
        sample_negatives(train, np.array([1, 0]), np.random.default_rng(0))
    assert sample_negatives(train, np.array([1, 1]), np.random.default_rng(0)).tolist() != [0, 0]


@pytest.mark.parametrize("pairs_per_block", [2**15, 3 * 50, 2])
def test_neumf_all_item_scores_equal_pairwise_forward(fitted, planted, monkeypatch, pairs_per_block):
    # one block of items; blocks of 50 items for 3 users (the last one short); one item a block
    monkeypatch.setattr(neumf, "_PAIRS_PER_BLOCK", pairs_per_block)
    net = fitted["neumf"].module_
    users = np.array([0, 11, 250])
    pairs_u = torch.from_numpy(np.repeat(users, planted.n_items))
    pairs_i = torch.arange(planted.n_items).repeat(users.size)
    with torch.no_grad():
        expected = net(pairs_u, pairs_i).reshape(users.size, planted.n_items).numpy()
    np.testing.assert_allclose(fitted["neumf"].score(users), expected, rtol=1e-5, atol=1e-6)


# --- settings ------------------------------------------------------------------------------------


def test_device_setting(monkeypatch):
    assert MultiVAE(device="cpu").device == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert NeuMF(device="auto").device == "cpu"
    assert NeuMF(device="auto").hyperparameters["device"] == "auto"
    with pytest.raises(ValueError, match="cuda"):
        NeuMF(device="cuda")
    with pytest.raises(ValueError, match="allowed: cpu, cuda, auto"):
        MultiVAE(device="tpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert _torch.resolve_device("auto") == torch.device("cuda")


@pytest.mark.parametrize(("cls", "kwargs", "match"), [
    (MultiVAE, {"n_epochs": 0}, "n_epochs"),
    (MultiVAE, {"dropout": 1.0}, "dropout"),
    (MultiVAE, {"beta_max": -0.1}, "beta_max"),
    (MultiVAE, {"total_anneal_steps": 0}, "total_anneal_steps"),
    (MultiVAE, {"num_threads": 0}, "num_threads"),
    (NeuMF, {"num_threads": 1.0}, "num_threads"),
    (MultiVAE, {"lr": float("nan")}, "lr"),
    (NeuMF, {"lr": 0}, "lr"),
    (NeuMF, {"lr": True}, "lr"),
    (NeuMF, {"mlp_layers": (15, 8)}, "even"),
    (NeuMF, {"mlp_layers": (16,)}, "at least two"),
    (NeuMF, {"n_negatives": 1.5}, "n_negatives"),
])
def test_bad_hyperparameters(cls, kwargs, match):
    with pytest.raises(ValueError, match=match):
        cls(**kwargs)


def test_hyperparameters_are_plain_values():
    hp = NeuMF(mlp_layers=(32, 16, 8)).hyperparameters
    assert hp["mlp_layers"] == [32, 16, 8] and hp["num_threads"] is None and hp["device"] == "cpu"
    assert MultiVAE().hyperparameters["total_anneal_steps"] is None
