"""Global ranks on a coarse-to-fine grid: estimators whose cost is set by n and K, not by N.

Every estimator of the package reads P(R) only through sums over the global ranks,

    Σ_{R=1}^{N} P(R) · h(R),

with h a product of kernel entries P(r | R) (the likelihood q_r = Σ_R P(R) P(r | R), AAAI'21
eq. 18; the Gram matrices Σ_R P(R) P(r | R) P(s | R) of BV and MN, KDD'20 eq. 24–26, AAAI'23
eq. 10–11) and of metric weights 1{R <= K} M(R). The kernel is a smooth function of
θ = (R − 1)/(N − 1) (a polynomial of degree n − 1 for sampling with replacement); near θ its
entries change on the scale

    s(θ) = √((θ(1 − θ) + 1/n) / n)                              (the spread of r/n given θ,
                                                                  at least 1/n near the ends)

in θ, that is (N − 1)·s(θ) global ranks: thousands of ranks for N = 10^6 and n = 100. The metric
weights are not smooth near the top (the cut-off K, 1/log2(R + 1)). So the grid keeps

* the ranks R = 1..C as exact nodes of weight 1, with C at least the largest cut-off asked for;
* beyond them, Gauss–Legendre panels of p = :data:`NODES_PER_PANEL` nodes on [C + ½, N + ½],
  each panel no wider than α·(N − 1)·s(θ) ranks (α = :data:`PANEL_WIDTH`), with panel
  boundaries at N_g + ½ for every candidate group's N_g (so that group g's ranks 1..N_g are a
  prefix of the nodes). A node j stands for w_j ranks (its Gauss weight times the panel width;
  Σ_j w_j = N) and carries the mass π_j = Σ_{R near node j} P(R).

The sum over the ranks of a panel [a − ½, b + ½] is the integral of the same function over the
panel up to (h'(b + ½) − h'(a − ½))/24 (the midpoint rule, rank by rank), and the integral is
Gauss–Legendre's up to O((width/scale)^{2p}) relative; both are far below 1e-6 with the defaults.
An estimator on the grid is the estimator of the exact ranks with each sum replaced by its
quadrature: EM's iterates are π_j^(t) = w_j g_t(R_j)/N, the exact iterates' smooth density g_t
at the nodes (from the uniform start π_j^(0) = w_j/N); the entropy of MES is
−Σ_j π_j log(π_j / w_j); a prior on the ranks becomes the masses of the nodes. Accuracy is
tested against the exact ranks at N = 10^5 and 10^6 (tests/test_rank_grid.py): every metric@K
with K <= 1000 and AUC within 1e-4 (measured: below 1e-6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.polynomial.legendre import leggauss

__all__ = ["AUTO_MIN_ITEMS", "GRIDS", "MIN_EXACT_RANKS", "NODES_PER_PANEL", "PANEL_WIDTH", "RankGrid", "choose_grid"]

#: Gauss–Legendre nodes per panel
NODES_PER_PANEL = 8
#: a panel's width in units of the kernel's scale (N − 1)·s(θ)
PANEL_WIDTH = 0.5
#: fewest exact ranks at the top (more when a larger cut-off is asked for)
MIN_EXACT_RANKS = 1000
#: ``grid="auto"`` takes the coarse grid from this many items on, where it has at most a
#: quarter as many nodes as there are ranks
AUTO_MIN_ITEMS = 100_000
#: the values of the ``grid`` option
GRIDS = ("auto", "exact", "coarse")


@dataclass(frozen=True, eq=False)
class RankGrid:
    """Nodes standing for the global ranks 1..N (module docstring).

    Attributes
    ----------
    n_items : int
        N, the largest number of items of the users (the largest N_g).
    nodes : numpy.ndarray
        ``(J,)`` increasing positions R_j (1..C exact, then Gauss–Legendre nodes).
    weights : numpy.ndarray
        ``(J,)`` number of ranks w_j each node stands for (1 for the exact ones; Σ w_j = N).
    exact : int
        C: the nodes 1..C are the ranks 1..C.
    edges : numpy.ndarray
        The panels' edges C + ½ < ... < N + ½ (half-integers: a panel holds whole ranks).
    key : tuple
        What defines the grid (for caches).
    """

    n_items: int
    nodes: np.ndarray
    weights: np.ndarray
    exact: int
    edges: np.ndarray
    key: tuple

    @classmethod
    def coarse(cls, n_items: int, sample_size: int, top: int = 0, breaks=()) -> RankGrid:
        """The coarse grid of N items for sample sets of (at most) ``sample_size`` items.

        Parameters
        ----------
        n_items : int
            N (the largest N_g).
        sample_size : int
            n (the largest n_u): the kernel's scale s(θ) shrinks with n.
        top : int
            The largest cut-off K asked for: ranks up to max(top, :data:`MIN_EXACT_RANKS`)
            are exact nodes.
        breaks : iterable of int
            Every N_g of the users' candidate groups: no panel straddles N_g + ½.
        """
        n_items, n = int(n_items), int(sample_size)
        exact = min(n_items, max(int(top), MIN_EXACT_RANKS))
        stops = sorted({int(b) for b in breaks if exact < int(b) < n_items} | {n_items})
        key = ("coarse", n_items, n, exact, tuple(stops), NODES_PER_PANEL, PANEL_WIDTH)
        edges = [np.array([exact + 0.5])]
        for stop in stops if exact < n_items else ():
            edges.append(_panel_edges(edges[-1][-1], stop + 0.5, n_items, n)[1:])
        edges = np.concatenate(edges)
        t, w = leggauss(NODES_PER_PANEL)
        a, b = edges[:-1, None], edges[1:, None]
        nodes = np.r_[np.arange(1.0, exact + 1.0), ((a + b) / 2 + (b - a) / 2 * t).ravel()]
        weights = np.r_[np.ones(exact), ((b - a) / 2 * w).ravel()]
        return cls(n_items, nodes, weights, exact, edges, key)

    @property
    def size(self) -> int:
        """J, the number of nodes."""
        return self.nodes.size

    def rows(self, n_items: int) -> int:
        """The number of nodes of the ranks 1..N_g (a prefix of the nodes, N_g a break), or of
        the ranks up to a cut-off K <= C (then K)."""
        return int(np.searchsorted(self.nodes, int(n_items) + 0.5))

    def uniform(self, n_items: int) -> np.ndarray:
        """The uniform P(R) on 1..N_g as node masses w_j / N_g."""
        return self.weights[: self.rows(n_items)] / float(n_items)

    def masses(self, distribution: np.ndarray) -> np.ndarray:
        """Node masses of a P(R) given on the ranks 1..N_g (N_g a break): each panel's
        probability, shared among its nodes in proportion to their weights."""
        p = np.asarray(distribution, dtype=np.float64)
        out = np.zeros(self.rows(p.size))
        out[: self.exact] = p[: self.exact]
        panels = (out.size - self.exact) // NODES_PER_PANEL
        if panels:
            cum = np.r_[0.0, np.cumsum(p)]
            mass = np.diff(cum[(self.edges[: panels + 1] - 0.5).astype(np.int64)])
            share = self.weights[self.exact: out.size].reshape(panels, NODES_PER_PANEL)
            out[self.exact:] = (share * (mass / share.sum(axis=1))[:, None]).ravel()
        return out

    def expand(self, masses: np.ndarray) -> np.ndarray:
        """P(R) on the ranks 1..N_g (N_g a break; N by default) from the masses of its nodes:
        the exact nodes as they are, the density π_j / w_j interpolated linearly between the
        other nodes, rescaled so that each panel keeps its mass."""
        masses = np.asarray(masses, dtype=np.float64)
        panels = (masses.size - self.exact) // NODES_PER_PANEL
        n_items = int(self.edges[panels] - 0.5)
        out = np.zeros(n_items)
        out[: self.exact] = masses[: self.exact]
        if panels:
            ranks = np.arange(self.exact + 1, n_items + 1, dtype=np.float64)
            tail = np.interp(ranks, self.nodes[self.exact: masses.size],
                             masses[self.exact:] / self.weights[self.exact: masses.size])
            first = (self.edges[:panels] + 0.5).astype(np.int64) - self.exact - 1  # each panel's first rank
            have = np.add.reduceat(tail, first)
            mass = masses[self.exact:].reshape(panels, NODES_PER_PANEL).sum(axis=1)
            scale = np.divide(mass, have, out=np.zeros_like(mass), where=have > 0)
            out[self.exact:] = tail * np.repeat(scale, np.diff(np.r_[first, ranks.size]))
        return out


def _panel_edges(start: float, stop: float, n_items: int, n: int) -> np.ndarray:
    """Edges of the panels on [start, stop] (half-integers: a panel holds whole ranks), each at
    most α (N − 1) s(θ) ranks wide."""
    edges = [start]
    while edges[-1] < stop:
        theta = min(1.0, max(0.0, (edges[-1] - 1.0) / max(n_items - 1.0, 1.0)))
        scale = np.sqrt((theta * (1.0 - theta) + 1.0 / n) / n)
        step = min(stop, edges[-1] + max(1.0, np.floor(PANEL_WIDTH * (n_items - 1.0) * scale)))
        edges.append(stop if stop - step < 1.0 else step)  # whole ranks, no panel narrower than one
    return np.asarray(edges)


def choose_grid(grid: str, n_items: int, sample_size: int, top: int, breaks=()) -> RankGrid | None:
    """The grid of an estimation: None for the exact ranks, else a :class:`RankGrid`.

    ``"exact"`` always gives None, ``"coarse"`` a coarse grid; ``"auto"`` (the default of the
    estimators) takes the coarse grid when N >= :data:`AUTO_MIN_ITEMS` and it has at most N/4
    nodes. ``top`` is the largest cut-off asked for (0 if none).
    """
    if grid not in GRIDS:
        raise ValueError(f"grid must be one of {', '.join(map(repr, GRIDS))}, got {grid!r}")
    if grid == "exact" or (grid == "auto" and n_items < AUTO_MIN_ITEMS):
        return None
    coarse = RankGrid.coarse(n_items, sample_size, top, breaks)
    if grid == "auto" and coarse.size > n_items / 4:
        return None
    return coarse
