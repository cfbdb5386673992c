"""NeuMF: neural matrix factorisation (He et al., WWW 2017).

He, Liao, Zhang, Nie, Hu, Chua, "Neural Collaborative Filtering", WWW 2017, §3.4. Two branches
with separate embeddings:

* GMF (eq. 9): φ^GMF = p_u^G ⊙ q_i^G;
* MLP (eq. 10): φ^MLP = a_L(W_L^T(... a_2(W_2^T [p_u^M; q_i^M] + b_2) ...) + b_L), ReLU a_l;

fused by ŷ_ui = σ(h^T [φ^GMF; φ^MLP]) (eq. 12). Training minimises the binary cross-entropy of
eq. 7 over the observed pairs and, every epoch, ``n_negatives`` items per observed pair drawn
uniformly from the items the user has not interacted with (§3.1.1, §4.1: 4 negatives).
Scores are the logits h^T [φ^GMF; φ^MLP] (monotone in ŷ_ui).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from torch import nn

from .._validation import check_positive_integer
from ._torch import (
    TorchRecommender,
    adam,
    batch_slices,
    check_learning_rate,
    gradient_step,
    rows_per_batch,
)

__all__ = ["NeuMF", "sample_negatives"]

#: (user, item) pairs whose MLP activations are computed at once while scoring: 2^15 pairs of
#: the default tower take 4 MiB per layer. Much larger blocks (tens of MiB) are handed back to
#: the system when freed and page-faulted in again for the next block; on 35,351 items that
#: made scoring about three times slower, most of it system time.
_PAIRS_PER_BLOCK = 2**15


def sample_negatives(train: sp.csr_matrix, users: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each entry of ``users``, one item drawn uniformly from the items it has not interacted with.

    Vectorised rejection sampling: draw all items uniformly from ``0..N-1``, look the
    (user, item) pairs up among the non-zeros of ``train`` (as sorted keys ``user·N + item``,
    binary search), redraw only the hits, and repeat until none is left. Each accepted draw is
    uniform over the user's non-interacted items.

    Parameters
    ----------
    train : scipy.sparse.csr_matrix
        ``(n_users, n_items)`` interactions; non-zeros are positives.
    users : numpy.ndarray
        int64 row indices, one per negative to draw (repeats allowed).
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        int64 items, ``len(users)`` of them.

    Raises
    ------
    ValueError
        If one of ``users`` has interacted with every item (it has no negative).
    """
    n_items = train.shape[1]
    counts = np.diff(train.indptr)
    full = np.flatnonzero(counts[np.unique(users)] >= n_items) if users.size else np.empty(0)
    if full.size:
        raise ValueError(f"{full.size} user(s) interacted with all {n_items} items and have no "
                         "negative item to sample; remove them from the training matrix")
    if not train.has_sorted_indices:
        train = train.sorted_indices()
    rows = np.repeat(np.arange(train.shape[0], dtype=np.int64), counts)
    keys = rows * n_items + train.indices.astype(np.int64)
    items = rng.integers(0, n_items, size=users.size, dtype=np.int64)
    todo = np.arange(users.size)
    while todo.size:
        wanted = users[todo] * n_items + items[todo]
        where = np.minimum(np.searchsorted(keys, wanted), max(keys.size - 1, 0))
        todo = todo[keys[where] == wanted] if keys.size else todo[:0]
        items[todo] = rng.integers(0, n_items, size=todo.size, dtype=np.int64)
    return items


class _NeuMFNet(nn.Module):
    """GMF and MLP branches with separate user/item embeddings, fused by one linear layer."""

    def __init__(self, n_users: int, n_items: int, n_factors: int, mlp_layers: Sequence[int]) -> None:
        super().__init__()
        half = mlp_layers[0] // 2
        self.gmf_user = nn.Embedding(n_users, n_factors)
        self.gmf_item = nn.Embedding(n_items, n_factors)
        self.mlp_user = nn.Embedding(n_users, half)
        self.mlp_item = nn.Embedding(n_items, half)
        self.mlp = nn.ModuleList(nn.Linear(a, b) for a, b in pairwise(mlp_layers))
        self.output = nn.Linear(n_factors + mlp_layers[-1], 1)
        # Initialisation of the authors' Keras code: embeddings N(0, 0.01²), Glorot-uniform
        # hidden layers, LeCun-uniform output layer, zero biases.
        for emb in (self.gmf_user, self.gmf_item, self.mlp_user, self.mlp_item):
            nn.init.normal_(emb.weight, std=0.01)
        for layer in self.mlp:
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
        bound = float(np.sqrt(3.0 / self.output.in_features))
        nn.init.uniform_(self.output.weight, -bound, bound)
        nn.init.zeros_(self.output.bias)

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        """Logits of the (user, item) pairs (eq. 12 without the sigmoid)."""
        gmf = self.gmf_user(users) * self.gmf_item(items)
        h = torch.cat([self.mlp_user(users), self.mlp_item(items)], dim=1)
        for layer in self.mlp:
            h = F.relu(layer(h))
        return self.output(torch.cat([gmf, h], dim=1)).squeeze(1)

    def score_all_items(self, users: torch.Tensor) -> torch.Tensor:
        """``(len(users), n_items)`` logits of every item, without materialising the pairs' inputs.

        Same function as :meth:`forward`: the GMF term is (p_u ⊙ h_G) · q_i, and the first MLP
        layer splits as W [p; q] = W_user p + W_item q, so its item half is computed once for all
        items and broadcast over the users of the batch. The MLP runs on blocks of items, about
        :data:`_PAIRS_PER_BLOCK` (user, item) pairs at a time.
        """
        n_factors = self.gmf_user.embedding_dim
        w_gmf, w_mlp = self.output.weight[0, :n_factors], self.output.weight[0, n_factors:]
        out = (self.gmf_user(users) * w_gmf) @ self.gmf_item.weight.T + self.output.bias
        first, rest = self.mlp[0], self.mlp[1:]
        half = self.mlp_user.embedding_dim
        user_part = self.mlp_user(users) @ first.weight[:, :half].T
        item_part = self.mlp_item.weight @ first.weight[:, half:].T + first.bias
        for items in batch_slices(item_part.shape[0], max(1, _PAIRS_PER_BLOCK // max(1, len(users)))):
            h = F.relu(user_part[:, None, :] + item_part[None, items, :])
            for layer in rest:
                h = F.relu(layer(h))
            out[:, items] += h @ w_mlp
        return out


class NeuMF(TorchRecommender):
    """NeuMF of He et al. (2017), trained from scratch (no GMF/MLP pre-training) with Adam.

    Parameters
    ----------
    n_epochs : int
        Passes over the observed pairs (each with freshly drawn negatives).
    batch_size : int
        (user, item, label) triples per gradient update. The authors' code uses 256 with
        lr 1e-3; 2048 with lr 2e-3 makes an epoch of ml-1m (5 million triples) several times
        cheaper on a CPU.
    lr : float
        Adam learning rate.
    n_factors : int
        Size of the GMF embeddings (the GMF predictive factors).
    mlp_layers : sequence of int
        Widths of the MLP tower, starting with the concatenated embedding size (so each MLP
        embedding has ``mlp_layers[0] // 2`` dimensions; the authors' default is
        ``(64, 32, 16, 8)``). ``mlp_layers[0]`` must be even and at least two widths are needed.
    n_negatives : int
        Negatives drawn per observed pair and epoch (paper: 4).
    device : {"cpu", "cuda", "auto"}
        Where to train and score.
    num_threads : int, optional
        Torch intra-op threads; ``None`` (the default) means ``OMP_NUM_THREADS`` if it is set,
        else the cores this process may use (see
        :func:`~itemsampling.models._torch.resolve_num_threads`).

    Attributes
    ----------
    module_ : torch.nn.Module
        The fitted network.
    history_ : list of dict
        Per epoch: mean binary cross-entropy.
    """

    name = "neumf"

    def __init__(self, *, n_epochs: int = 10, batch_size: int = 2048, lr: float = 2e-3,
                 n_factors: int = 8, mlp_layers: Sequence[int] = (64, 32, 16, 8),
                 n_negatives: int = 4, device: str = "cpu", num_threads: int | None = None) -> None:
        n_epochs = check_positive_integer("n_epochs", n_epochs)
        batch_size = check_positive_integer("batch_size", batch_size)
        n_factors = check_positive_integer("n_factors", n_factors)
        n_negatives = check_positive_integer("n_negatives", n_negatives)
        lr = check_learning_rate(lr)
        if isinstance(mlp_layers, (str, bytes)) or not isinstance(mlp_layers, Sequence) or len(mlp_layers) < 2:
            raise ValueError(f"mlp_layers must be a sequence of at least two widths, got {mlp_layers!r}")
        mlp_layers = [check_positive_integer("each of mlp_layers", w) for w in mlp_layers]
        if mlp_layers[0] % 2:
            raise ValueError(f"mlp_layers[0] is the concatenated user+item embedding size and must "
                             f"be even, got {mlp_layers[0]}")
        super().__init__(n_epochs=n_epochs, batch_size=batch_size, lr=lr,
                         n_factors=n_factors, mlp_layers=mlp_layers, n_negatives=n_negatives,
                         device=device, num_threads=num_threads)
        self.history_: list[dict[str, float]] = []

    def _build_module(self, n_users: int, n_items: int) -> nn.Module:
        hp = self._hyperparameters
        return _NeuMFNet(n_users, n_items, hp["n_factors"], hp["mlp_layers"])

    def _train(self, module: nn.Module, train: sp.csr_matrix, rng: np.random.Generator,
               progress: bool | None) -> None:
        hp = self._hyperparameters
        n_neg = hp["n_negatives"]
        pos_users = np.repeat(np.arange(train.shape[0], dtype=np.int64), np.diff(train.indptr))
        pos_items = train.indices.astype(np.int64)
        neg_users = np.repeat(pos_users, n_neg)
        users = torch.from_numpy(np.concatenate([pos_users, neg_users]))
        labels = torch.cat([torch.ones(pos_users.size), torch.zeros(neg_users.size)])
        optimizer = adam(module, hp["lr"])
        self.history_ = []
        epochs = self._epoch_bar(progress)
        for epoch in epochs:
            items = torch.from_numpy(np.concatenate([pos_items, sample_negatives(train, neg_users, rng)]))
            order = torch.from_numpy(rng.permutation(users.numel()))
            total = 0.0
            for part in batch_slices(order.numel(), hp["batch_size"]):
                idx = order[part]
                logits = module(users[idx].to(self._torch_device), items[idx].to(self._torch_device))
                loss = F.binary_cross_entropy_with_logits(logits, labels[idx].to(self._torch_device))
                gradient_step(optimizer, loss)
                total += loss.item() * idx.numel()
            mean = total / order.numel()
            self.history_.append({"epoch": epoch + 1, "loss": mean})
            epochs.set_postfix(loss=f"{mean:.4f}")

    def _score_batch_size(self) -> int:
        # the logits of a row and their float32 copy on the way out (the MLP runs in blocks)
        return rows_per_batch(2 * self.n_items)

    def _score_batch(self, users: np.ndarray) -> torch.Tensor:
        return self.module_.score_all_items(torch.from_numpy(users).to(self._torch_device))
