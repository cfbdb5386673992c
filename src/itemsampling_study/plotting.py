"""One figure style for every notebook, and the writers of notebook outputs.

Figures are made for citing: they are readable at single-column width (3.3 in), have labelled
axes, use the colour-blind-safe Okabe–Ito palette (Okabe & Ito, 2008, "Color Universal Design")
and are written as a vector PDF plus a PNG for reading. The PDF carries the tables it was drawn
from (with the start of their SHA-256) and the parameters that made it in its metadata, and no
date or commit, so a rerun with the same inputs writes the same bytes.

=================================== ==========================================================
``apply_style()``                    set the shared matplotlib style (rcParams)
``new_figure(ncols, nrows, ...)``    a figure of single- or double-column width
``save_figure(fig, notebook, name)`` write ``figures/<notebook>/<name>.pdf`` and ``.png``
``show_figure(fig, notebook, name)`` save it, show it in the notebook and close it
=================================== ==========================================================
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt

from itemsampling._sources import tables_read

__all__ = [
    "OKABE_ITO",
    "SINGLE_COLUMN",
    "STYLE",
    "apply_style",
    "new_figure",
    "save_figure",
    "show_figure",
]

#: Okabe–Ito colours, in the order used for successive lines (black last).
OKABE_ITO = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)
#: Resolution of the figures shown in notebooks (the saved PNG uses ``savefig.dpi``).
DISPLAY_DPI = 100
#: Width of one column of a two-column paper, in inches.
SINGLE_COLUMN = 3.3
#: Width of a figure spanning both columns, in inches.
DOUBLE_COLUMN = 6.9

#: matplotlib rcParams of the shared style.
STYLE = {
    "figure.figsize": (SINGLE_COLUMN, SINGLE_COLUMN * 0.75),
    "figure.dpi": 150,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "lines.linewidth": 1.2,
    "lines.markersize": 3.5,
    "axes.grid": True,
    "grid.linewidth": 0.4,
    "grid.alpha": 0.4,
    "axes.spines.top": False,
    "axes.spines.right": False,
    # after the eight colours, lines repeat them dashed, then dotted: never two identical lines
    "axes.prop_cycle": mpl.cycler(linestyle=["-", "--", ":"]) * mpl.cycler(color=list(OKABE_ITO)),
    "legend.frameon": False,
    "pdf.fonttype": 42,  # embed TrueType fonts, so text stays text in the PDF
    "ps.fonttype": 42,
    "svg.hashsalt": "itemsampling",
}


def apply_style() -> None:
    """Set the shared style in :data:`matplotlib.rcParams` (idempotent)."""
    mpl.rcParams.update(STYLE)


def new_figure(ncols: int = 1, nrows: int = 1, width: str | float = "single",
               aspect: float = 0.75, **subplots_kw):
    """A figure in the shared style, sized for a paper column.

    Parameters
    ----------
    ncols, nrows : int
        Grid of axes.
    width : {"single", "double"} or float
        Single column (3.3 in), both columns (6.9 in) or a width in inches.
    aspect : float
        Height of one row of axes relative to the width of one column of axes.
    **subplots_kw
        Passed to :func:`matplotlib.pyplot.subplots` (e.g. ``sharey=True``).

    Returns
    -------
    (matplotlib.figure.Figure, axes)
    """
    apply_style()
    if width == "single":
        inches = SINGLE_COLUMN
    elif width == "double":
        inches = DOUBLE_COLUMN
    elif isinstance(width, (int, float)) and not isinstance(width, bool) and width > 0:
        inches = float(width)
    else:
        raise ValueError(f"width must be 'single', 'double' or a positive number of inches, got {width!r}")
    height = inches / ncols * aspect * nrows
    return plt.subplots(nrows, ncols, figsize=(inches, height), layout="constrained", **subplots_kw)


def _parameters_text(params: Mapping | None) -> str:
    return json.dumps(dict(params or {}), sort_keys=True, default=str)


def save_figure(fig, notebook: str, name: str, params: Mapping | None = None,
                root: str | Path = ".", close: bool = True) -> tuple[Path, Path]:
    """Write ``figures/<notebook>/<name>.pdf`` (vector) and ``.png`` under ``root``.

    The PDF metadata holds the title, the tables read so far with the start of their SHA-256
    (``Keywords``; :func:`itemsampling._sources.tables_read`) and the parameters as JSON
    (``Subject``); no date and no commit, so that redrawing from the same tables writes the same
    bytes. The PNG carries the same text in its ``Description`` and ``Source`` fields.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    notebook, name : str
        Output folder (the notebook that makes the figure) and file stem.
    params : mapping, optional
        Parameters that determine the figure (JSON-serialisable; others are written with str).
    root : str or Path
        Folder that holds ``figures/``.
    close : bool
        Close the figure after saving (keeps notebooks light).

    Returns
    -------
    (Path, Path)
        The PDF and PNG paths.
    """
    for label, value in (("notebook", notebook), ("name", name)):
        if not isinstance(value, str) or not value or "/" in value:
            raise ValueError(f"{label} must be a non-empty file name without '/', got {value!r}")
    out_dir = Path(root) / "figures" / notebook
    out_dir.mkdir(parents=True, exist_ok=True)
    text, sources = _parameters_text(params), f"made from {tables_read() or 'no table'}"
    pdf, png = out_dir / f"{name}.pdf", out_dir / f"{name}.png"
    fig.savefig(pdf, metadata={"Title": f"{notebook}/{name}", "Subject": text, "Keywords": sources,
                               "Creator": "itemsampling", "CreationDate": None, "ModDate": None})
    fig.savefig(png, metadata={"Title": f"{notebook}/{name}", "Description": text, "Source": sources,
                               "Software": "itemsampling"})
    if close:
        plt.close(fig)
    return pdf, png


def show_figure(fig, notebook: str, name: str, params: Mapping | None = None,
                root: str | Path = ".") -> None:
    """Save ``fig`` with :func:`save_figure`, show it in the running notebook, and close it.

    The figure is shown as a PNG rendered at :data:`DISPLAY_DPI` (which keeps executed notebooks
    light; the saved files keep their own resolution) and passed to
    :func:`IPython.display.display`, which works whatever the matplotlib backend (``Agg``
    included), so executed notebooks carry their figures; outside IPython it is only saved.
    Nothing is returned, so a plotting cell prints nothing else.
    """
    save_figure(fig, notebook, name, params, root=root, close=False)
    try:
        from IPython import get_ipython
        from IPython.display import Image, display
    except ImportError:  # pragma: no cover - IPython is a dependency of the notebooks only
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DISPLAY_DPI)
        display(Image(data=buffer.getvalue(), format="png"))
    plt.close(fig)
