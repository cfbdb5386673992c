"""Torch utilities shared by the neural recommenders: device, seeding, threads, batching.

The neural models (:mod:`~itemsampling.models.multivae`, :mod:`~itemsampling.models.neumf`)
run on the CPU by default. Everything that touches process-wide torch state (the global random
generator, the number of intra-op threads, deterministic-algorithm mode) is done inside
:func:`torch_session`, which restores the previous state on exit, so that fitting a model never
changes the behaviour of unrelated code.

By default the models use as many threads as the environment allows
(:func:`resolve_num_threads`): ``OMP_NUM_THREADS`` when it is set, as it is by the workflow
from each rule's ``threads``, else the cores this process may run on. More threads than free
cores (oversubscription) can make a CPU fit several times slower, not faster.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from .._progress import progress_bar
from .._validation import check_choice, check_positive_integer
from .base import Recommender, check_interactions

__all__ = [
    "DEVICES",
    "SCORE_MEMORY_BYTES",
    "TorchRecommender",
    "adam",
    "batch_slices",
    "check_learning_rate",
    "gradient_step",
    "is_real",
    "resolve_device",
    "resolve_num_threads",
    "rows_per_batch",
    "score_in_batches",
    "seed_generators",
    "torch_environment",
    "torch_session",
]

#: Accepted values of the ``device`` hyper-parameter.
DEVICES = ("cpu", "cuda", "auto")

#: Memory budget (bytes) of the intermediate tensors built while scoring one batch of users.
SCORE_MEMORY_BYTES = 256 * 2**20


def is_real(value) -> bool:
    """Whether ``value`` is a finite real number (``bool`` excluded)."""
    return (not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))
            and bool(np.isfinite(value)))


def check_learning_rate(lr) -> float:
    """Return the learning rate ``lr`` as ``float`` if it is a finite number > 0, else raise ``ValueError``."""
    if not (is_real(lr) and lr > 0):
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    return float(lr)


def resolve_device(device: str) -> torch.device:
    """Turn the ``device`` setting into a :class:`torch.device`.

    Parameters
    ----------
    device : {"cpu", "cuda", "auto"}
        ``"auto"`` picks CUDA when :func:`torch.cuda.is_available`, else the CPU.

    Raises
    ------
    ValueError
        If ``device`` is not one of :data:`DEVICES`, or is ``"cuda"`` on a machine without CUDA.
    """
    device = check_choice("device", device, DEVICES)
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but torch.cuda.is_available() is False; "
                         "use device='cpu' or device='auto'")
    return torch.device(device)


def torch_environment(num_threads: int | None = None) -> dict:
    """What decides the bits of a torch fit on this machine, for a fit's record: torch's version,
    the CPU kernels it dispatches to (``torch.backends.cpu.get_cpu_capability``, e.g. AVX2 or
    AVX512) and the intra-op threads :func:`resolve_num_threads` gives for ``num_threads``."""
    return {"version": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "threads": resolve_num_threads(num_threads)}


def resolve_num_threads(num_threads: int | None = None) -> int:
    """The number of torch intra-op threads to use.

    Parameters
    ----------
    num_threads : int, optional
        An explicit count, returned as is (after checking that it is an integer >= 1). ``None``
        asks the environment: the value of ``OMP_NUM_THREADS`` if it is set and not empty (for
        a comma-separated list of per-level counts, its first entry), else the number of cores
        this process may run on (:func:`os.sched_getaffinity` where the platform has it, else
        :func:`os.cpu_count`; 1 if neither is known).

    Returns
    -------
    int
        The thread count, at least 1.

    Raises
    ------
    ValueError
        If ``num_threads`` is not ``None`` nor an integer >= 1, or ``OMP_NUM_THREADS`` is set
        to something other than a positive integer.
    """
    if num_threads is not None:
        return check_positive_integer("num_threads", num_threads)
    setting = os.environ.get("OMP_NUM_THREADS", "").strip()
    if setting:
        first = setting.split(",")[0].strip()
        if not first.isdecimal() or int(first) < 1:
            raise ValueError(f"OMP_NUM_THREADS must be a positive integer, got {setting!r}")
        return int(first)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def seed_generators(seed: int | None) -> tuple[np.random.Generator, int]:
    """Derive a numpy generator and a torch seed from one ``seed``.

    Both come from the same :class:`numpy.random.SeedSequence`, as independent children, so the
    same ``seed`` gives the same draws byte for byte and ``seed=None`` gives fresh entropy.

    Returns
    -------
    rng : numpy.random.Generator
        For shuffling and negative sampling.
    torch_seed : int
        For :func:`torch.manual_seed` (weight initialisation, dropout, reparameterisation noise).
    """
    numpy_child, torch_child = np.random.SeedSequence(seed).spawn(2)
    torch_seed = int(torch_child.generate_state(1, dtype=np.uint64)[0])
    return np.random.default_rng(numpy_child), torch_seed


@contextmanager
def torch_session(device: torch.device, num_threads: int | None = None,
                  torch_seed: int | None = None) -> Iterator[None]:
    """Run a block with a fixed number of torch threads and, optionally, a seeded torch RNG.

    On exit the number of threads, the deterministic-algorithm flag and the global torch random
    state are restored to what they were before.

    Parameters
    ----------
    device : torch.device
        Device the block runs on; its random state is forked as well.
    num_threads : int, optional
        Number of torch intra-op threads inside the block (:func:`torch.set_num_threads`);
        ``None`` takes it from the environment (:func:`resolve_num_threads`).
    torch_seed : int, optional
        If given, :func:`torch.manual_seed` is called inside the block. On the CPU
        :func:`torch.use_deterministic_algorithms` is switched on, which costs nothing there;
        on CUDA it is left alone (it would need ``CUBLAS_WORKSPACE_CONFIG`` and slower kernels),
        so CUDA runs are reproducible only up to floating-point summation order.
    """
    num_threads = resolve_num_threads(num_threads)
    previous_threads = torch.get_num_threads()
    previous_deterministic = torch.are_deterministic_algorithms_enabled()
    previous_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    fork_devices = [device.index or 0] if device.type == "cuda" else []
    torch.set_num_threads(num_threads)
    try:
        with torch.random.fork_rng(devices=fork_devices):
            if torch_seed is not None:
                torch.manual_seed(torch_seed)
                if device.type == "cpu":
                    torch.use_deterministic_algorithms(True)
            yield
    finally:
        torch.use_deterministic_algorithms(previous_deterministic, warn_only=previous_warn_only)
        torch.set_num_threads(previous_threads)


def adam(module: nn.Module, lr: float) -> torch.optim.Adam:
    """Adam (Kingma & Ba 2015) over ``module``'s parameters, with the fused kernel.

    The fused implementation does the same element-wise update in one pass per tensor; on a
    2-core CPU it is several times faster than the default multi-tensor one.
    """
    return torch.optim.Adam(module.parameters(), lr=lr, fused=True)


def gradient_step(optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> None:
    """One update of ``optimizer``: clear the gradients, back-propagate ``loss``, step."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def batch_slices(n: int, batch_size: int) -> Iterator[slice]:
    """Yield consecutive slices ``[start, start + batch_size)`` covering ``range(n)``."""
    for start in range(0, n, batch_size):
        yield slice(start, min(start + batch_size, n))


def rows_per_batch(floats_per_row: int, budget_bytes: int = SCORE_MEMORY_BYTES) -> int:
    """Largest number of rows whose float32 intermediates fit in ``budget_bytes`` (at least 1)."""
    return max(1, budget_bytes // (4 * max(1, floats_per_row)))


def score_in_batches(score_batch: Callable[[np.ndarray], torch.Tensor], users: np.ndarray,
                     n_items: int, batch_size: int) -> np.ndarray:
    """Collect the scores of ``users`` batch by batch into one float32 array.

    Parameters
    ----------
    score_batch : callable
        Maps an array of user indices to a ``(len(batch), n_items)`` tensor of scores.
    users : numpy.ndarray
        User indices, already checked.
    n_items : int
        Number of items N (columns of the result).
    batch_size : int
        Users per call of ``score_batch``; choose it with :func:`rows_per_batch`.

    Returns
    -------
    numpy.ndarray
        ``(len(users), n_items)`` float32 scores, on the CPU.
    """
    out = np.empty((len(users), n_items), dtype=np.float32)
    with torch.inference_mode():
        for part in batch_slices(len(users), batch_size):
            out[part] = score_batch(users[part]).float().cpu().numpy()
    return out


class TorchRecommender(Recommender):
    """A :class:`~itemsampling.models.base.Recommender` whose parameters are a torch module.

    Subclasses implement ``_build_module(n_users, n_items)``, ``_train(module, train, rng,
    progress)`` and ``_score_batch(users)``. Fitting builds the module inside
    :func:`torch_session` seeded from ``seed``; the fitted module is ``module_`` (eval mode) and
    its ``state_dict`` is what :meth:`state` saves.

    Parameters
    ----------
    device : {"cpu", "cuda", "auto"}
        Where to train and score; ``"auto"`` picks CUDA if available. The resolved device is
        the ``device`` attribute.
    num_threads : int, optional
        Torch intra-op threads used while fitting and scoring. ``None`` (the default) takes the
        count from the environment each time the model fits or scores: ``OMP_NUM_THREADS`` if
        set, else the cores this process may use (:func:`resolve_num_threads`).
    **hyperparameters
        The subclass's own hyper-parameters.
    """

    def __init__(self, *, device: str = "cpu", num_threads: int | None = None,
                 **hyperparameters: Any) -> None:
        torch_device = resolve_device(device)
        if num_threads is not None:
            num_threads = check_positive_integer("num_threads", num_threads)
        super().__init__(**hyperparameters, device=device, num_threads=num_threads)
        self._torch_device = torch_device
        self._num_threads = num_threads
        self.device = torch_device.type
        self.module_: nn.Module | None = None

    @property
    def environment(self) -> dict[str, Any]:
        """Torch's version, CPU kernels and the threads a fit here uses (:func:`torch_environment`)."""
        return {"torch": torch_environment(self._num_threads)}

    @abstractmethod
    def _build_module(self, n_users: int, n_items: int) -> nn.Module:
        """A freshly initialised module for a training matrix of this shape."""

    @abstractmethod
    def _train(self, module: nn.Module, train: sp.csr_matrix, rng: np.random.Generator,
               progress: bool | None) -> None:
        """Optimise ``module`` (already on the device, in train mode) on ``train``."""

    @abstractmethod
    def _score_batch(self, users: np.ndarray) -> torch.Tensor:
        """``(len(users), n_items)`` scores of one batch, computed with ``module_``."""

    @abstractmethod
    def _score_batch_size(self) -> int:
        """Users per scoring batch (keep the intermediates within :data:`SCORE_MEMORY_BYTES`)."""

    def _epoch_bar(self, progress: bool | None):
        """Progress bar over ``range(n_epochs)`` of the subclass's ``n_epochs`` hyper-parameter."""
        return progress_bar(range(self._hyperparameters["n_epochs"]), progress, desc=f"fitting {self.name}",
                            unit="epoch")

    def _fit(self, train: sp.csr_matrix, seed: int | None, progress: bool | None) -> None:
        rng, torch_seed = seed_generators(seed)
        with torch_session(self._torch_device, self._num_threads, torch_seed):
            module = self._build_module(*train.shape).to(self._torch_device)
            module.train()
            self._train(module, train, rng, progress)
        self.module_ = module.eval()

    def _score(self, users: np.ndarray) -> np.ndarray:
        with torch_session(self._torch_device, self._num_threads):
            return score_in_batches(self._score_batch, users, self.n_items,
                                    self._score_batch_size())

    def state(self) -> dict[str, np.ndarray]:
        """The fitted module's ``state_dict`` as named numpy arrays."""
        self._check_fitted()
        return {name: tensor.detach().cpu().numpy().copy()
                for name, tensor in self.module_.state_dict().items()}

    def load_state(self, train, state: dict[str, np.ndarray]) -> TorchRecommender:
        """Restore a model fitted on ``train`` from the arrays returned by :meth:`state`."""
        train = check_interactions(train)
        module = self._build_module(*train.shape)
        expected = module.state_dict()
        missing = sorted(set(expected) - set(state))
        if missing:
            raise ValueError(f"state of {type(self).__name__} lacks the arrays {missing}")
        wrong = sorted(name for name in expected if tuple(np.shape(state[name])) != tuple(expected[name].shape))
        if wrong:
            raise ValueError(f"state arrays {wrong} do not match the shapes of a "
                             f"{type(self).__name__} with these hyper-parameters and data")
        module.load_state_dict({name: torch.as_tensor(np.asarray(state[name])) for name in expected})
        self.train_ = train
        self.module_ = module.to(self._torch_device).eval()
        return self
