"""Mult-VAE: variational autoencoder with a multinomial likelihood (Liang et al., WWW 2018).

Liang, Krishnan, Hoffman, Jebara, "Variational Autoencoders for Collaborative Filtering",
WWW 2018. A user's binary interaction row x_u is L2-normalised, dropped out and encoded to a
Gaussian q(z_u | x_u) = N(μ_u, diag σ²_u); the decoder maps z_u to logits f(z_u) over all items,
π(z_u) = softmax(f(z_u)), and the likelihood is multinomial, log p(x_u | z_u) = Σ_i x_ui log π_i
(paper eq. 2). Training maximises the β-weighted evidence lower bound (eq. 6)

    L_β(x_u) = E_q[log p(x_u | z_u)] − β · KL(q(z_u | x_u) ‖ N(0, I)),

with one reparameterised sample z_u = μ_u + σ_u ⊙ ε, and β annealed linearly from 0 (§2.2.2).
Scores are the decoder logits at the posterior mean, f(μ_u) (§2.4: "we use the mean").
"""

from __future__ import annotations

from typing import NamedTuple

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
    is_real,
    rows_per_batch,
)

__all__ = ["MultiVAE", "kl_weight"]


def kl_weight(step: int, total_anneal_steps: int, beta_max: float) -> float:
    """KL weight β of the ``step``-th gradient update (1-based) under linear annealing.

    Liang et al. (2018, §2.2.2) anneal β linearly from 0 and stop at a cap; here the line is
    drawn so that the cap ``beta_max`` is reached exactly at update ``total_anneal_steps``::

        β(s) = beta_max · min(1, s / total_anneal_steps)

    (The authors' code instead grows β by ``1 / total_anneal_steps`` per update and clips at the
    cap, so it reaches the cap after ``beta_max · total_anneal_steps`` updates.)
    """
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    return beta_max * min(1.0, step / total_anneal_steps)


class _SparseRows(NamedTuple):
    """A batch of binary rows in CSR form, as torch tensors: what the network consumes."""

    indices: torch.Tensor  # column of each non-zero
    offsets: torch.Tensor  # start of each row in ``indices``
    rows: torch.Tensor  # row (within the batch) of each non-zero
    values: torch.Tensor  # value of each non-zero
    n_rows: int


def _sparse_rows(matrix: sp.csr_matrix, rows: np.ndarray, device: torch.device) -> _SparseRows:
    """The given rows of ``matrix`` as a :class:`_SparseRows` batch on ``device``."""
    block = matrix[rows]
    counts = np.diff(block.indptr)
    return _SparseRows(
        indices=torch.from_numpy(block.indices.astype(np.int64)).to(device),
        offsets=torch.from_numpy(block.indptr[:-1].astype(np.int64)).to(device),
        rows=torch.from_numpy(np.repeat(np.arange(len(rows), dtype=np.int64), counts)).to(device),
        values=torch.from_numpy(block.data.astype(np.float32)).to(device),
        n_rows=len(rows),
    )


class _MultVAENet(nn.Module):
    """Encoder I→hidden→(μ, log σ²) of size latent and decoder latent→hidden→I, tanh between.

    The first encoder layer, x ↦ W x + b for the sparse normalised input x, is an
    :class:`~torch.nn.EmbeddingBag` (sum of the weight rows of the user's items, weighted by the
    input values): the same affine map as a dense linear layer, without touching the zeros.
    Dropout on x only ever changes its non-zeros, so it is applied to those.
    """

    def __init__(self, n_items: int, hidden_dim: int, latent_dim: int, dropout: float) -> None:
        super().__init__()
        self.latent_dim = latent_dim
        self.input_dropout = nn.Dropout(dropout)
        self.encoder_hidden = nn.EmbeddingBag(n_items, hidden_dim, mode="sum")
        self.encoder_hidden_bias = nn.Parameter(torch.empty(hidden_dim))
        self.encoder_out = nn.Linear(hidden_dim, 2 * latent_dim)
        self.decoder_hidden = nn.Linear(latent_dim, hidden_dim)
        self.decoder_out = nn.Linear(hidden_dim, n_items)
        # Initialisation of the authors' code: Glorot-uniform weights, biases ~ N(0, 0.001²).
        nn.init.xavier_uniform_(self.encoder_hidden.weight)
        nn.init.trunc_normal_(self.encoder_hidden_bias, std=0.001, a=-0.002, b=0.002)
        for layer in (self.encoder_out, self.decoder_hidden, self.decoder_out):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.trunc_normal_(layer.bias, std=0.001, a=-0.002, b=0.002)

    def encode(self, x: _SparseRows) -> tuple[torch.Tensor, torch.Tensor]:
        """(μ, log σ²) of q(z | x) for a batch of rows ``x`` (L2-normalised, then dropped out)."""
        norms = torch.zeros(x.n_rows, device=x.values.device).index_add_(0, x.rows, x.values.square())
        normalised = x.values / norms.sqrt()[x.rows]
        h = self.encoder_hidden(x.indices, x.offsets, per_sample_weights=self.input_dropout(normalised))
        h = torch.tanh(h + self.encoder_hidden_bias)
        mu, logvar = self.encoder_out(h).split(self.latent_dim, dim=1)
        return mu, logvar

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Item logits f(z) (unnormalised log π)."""
        return self.decoder_out(torch.tanh(self.decoder_hidden(z)))

    def forward(self, x: _SparseRows) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar) if self.training else mu
        return self.decode(z), mu, logvar


def _negative_elbo_terms(x: _SparseRows, logits: torch.Tensor, mu: torch.Tensor,
                         logvar: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Batch means of −Σ_i x_ui log π_i (eq. 2) and of KL(N(μ, σ²) ‖ N(0, I)) (eq. 6)."""
    log_pi = F.log_softmax(logits, dim=1)
    neg_log_likelihood = -(log_pi[x.rows, x.indices] * x.values).sum() / x.n_rows
    kl = 0.5 * (torch.exp(logvar) + mu.square() - 1.0 - logvar).sum(dim=1).mean()
    return neg_log_likelihood, kl


class MultiVAE(TorchRecommender):
    """Mult-VAE^PR of Liang et al. (2018): architecture [I-600-200-600-I], β-annealed ELBO.

    Every row of the training matrix is a training example (the whole user base is fitted, as in
    the leave-one-out protocol: a user's test item is the one missing from its row).

    Parameters
    ----------
    n_epochs : int
        Passes over all users.
    batch_size : int
        Users per gradient update. The paper uses 500 on data sets with 10^5 users; with the
        6,040 users of ml-1m that is only 13 updates per epoch, and 100 reaches a better fit
        for the same training time.
    lr : float
        Adam learning rate (paper: 1e-3).
    hidden_dim, latent_dim : int
        Widths of the hidden layer (600) and of the latent code (200).
    dropout : float
        Dropout probability on the normalised input (paper: 0.5).
    beta_max : float
        Cap of the annealed KL weight β (paper: 0.2).
    total_anneal_steps : int or None
        Number of updates over which β grows linearly from 0 to ``beta_max``
        (:func:`kl_weight`); ``None`` means all updates of the run, so β reaches ``beta_max`` on
        the last one.
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
        Per epoch: mean loss, mean negative log-likelihood, mean KL and the last β used.
    """

    name = "multivae"

    def __init__(self, *, n_epochs: int = 30, batch_size: int = 100, lr: float = 1e-3,
                 hidden_dim: int = 600, latent_dim: int = 200, dropout: float = 0.5,
                 beta_max: float = 0.2, total_anneal_steps: int | None = None,
                 device: str = "cpu", num_threads: int | None = None) -> None:
        n_epochs = check_positive_integer("n_epochs", n_epochs)
        batch_size = check_positive_integer("batch_size", batch_size)
        hidden_dim = check_positive_integer("hidden_dim", hidden_dim)
        latent_dim = check_positive_integer("latent_dim", latent_dim)
        if total_anneal_steps is not None:
            total_anneal_steps = check_positive_integer("total_anneal_steps", total_anneal_steps)
        lr = check_learning_rate(lr)
        if not (is_real(dropout) and 0 <= dropout < 1):
            raise ValueError(f"dropout must be a probability in [0, 1), got {dropout!r}")
        if not (is_real(beta_max) and beta_max >= 0):
            raise ValueError(f"beta_max must be a non-negative number, got {beta_max!r}")
        super().__init__(n_epochs=n_epochs, batch_size=batch_size, lr=lr,
                         hidden_dim=hidden_dim, latent_dim=latent_dim, dropout=float(dropout),
                         beta_max=float(beta_max), total_anneal_steps=total_anneal_steps,
                         device=device, num_threads=num_threads)
        self.history_: list[dict[str, float]] = []

    def _build_module(self, n_users: int, n_items: int) -> nn.Module:
        hp = self._hyperparameters
        return _MultVAENet(n_items, hp["hidden_dim"], hp["latent_dim"], hp["dropout"])

    def _train(self, module: nn.Module, train: sp.csr_matrix, rng: np.random.Generator,
               progress: bool | None) -> None:
        hp = self._hyperparameters
        n_users = train.shape[0]
        batches_per_epoch = -(-n_users // hp["batch_size"])
        total_anneal_steps = hp["total_anneal_steps"] or hp["n_epochs"] * batches_per_epoch
        optimizer = adam(module, hp["lr"])
        self.history_ = []
        step = 0
        epochs = self._epoch_bar(progress)
        for epoch in epochs:
            order = rng.permutation(n_users)
            sums = np.zeros(3)
            for part in batch_slices(n_users, hp["batch_size"]):
                step += 1
                beta = kl_weight(step, total_anneal_steps, hp["beta_max"])
                x = _sparse_rows(train, order[part], self._torch_device)
                logits, mu, logvar = module(x)
                nll, kl = _negative_elbo_terms(x, logits, mu, logvar)
                loss = nll + beta * kl
                gradient_step(optimizer, loss)
                sums += np.array([loss.item(), nll.item(), kl.item()])
            mean = sums / batches_per_epoch
            self.history_.append({"epoch": epoch + 1, "loss": mean[0], "neg_log_likelihood": mean[1],
                                  "kl": mean[2], "kl_weight": beta})
            epochs.set_postfix(loss=f"{mean[0]:.2f}", beta=f"{beta:.3f}")

    def _score_batch_size(self) -> int:
        # the logits of a row and their float32 copy on the way out
        return rows_per_batch(2 * self.n_items)

    def _score_batch(self, users: np.ndarray) -> torch.Tensor:
        logits, _, _ = self.module_(_sparse_rows(self.train_, users, self._torch_device))
        return logits
