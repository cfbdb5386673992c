"""The shared figure style and writers."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import hashlib

import pandas as pd
import pytest

from itemsampling_study import plotting


def _figure():
    fig, ax = plotting.new_figure()
    ax.plot([1, 2, 3], [3, 1, 2], label="a")
    ax.set_xlabel("x")
    return fig


def test_save_figure_writes_deterministic_pdf_with_metadata(tmp_path):
    params = {"n": 3, "gammas": [0.1]}
    pdf, png = plotting.save_figure(_figure(), "nb", "fig", params, root=tmp_path)
    assert pdf == tmp_path / "figures" / "nb" / "fig.pdf" and png.exists()
    first = pdf.read_bytes()
    plotting.save_figure(_figure(), "nb", "fig", params, root=tmp_path)
    assert pdf.read_bytes() == first
    assert b"CreationDate" not in first
    assert b"gammas" in first


def test_a_figure_names_the_tables_it_was_drawn_from(tmp_path):
    from PIL import Image

    from itemsampling_study.tables import read_table, write_table

    write_table(pd.DataFrame({"k": [1], "x": [0.5]}), tmp_path / "results" / "tables" / "nb" / "t.csv")
    read_table("nb", "t", tmp_path)
    digest = hashlib.sha256((tmp_path / "results" / "tables" / "nb" / "t.csv").read_bytes()).hexdigest()[:16]
    pdf, png = plotting.save_figure(_figure(), "nb", "fig", {}, root=tmp_path)
    assert f"nb/t.csv {digest}".encode() in pdf.read_bytes()
    assert f"nb/t.csv {digest}" in Image.open(png).text["Source"]
    # redrawn from the same tables: the same bytes
    before = pdf.read_bytes()
    plotting.save_figure(_figure(), "nb", "fig", {}, root=tmp_path)
    assert pdf.read_bytes() == before


def test_new_figure_sizes_and_palette():
    fig, _ = plotting.new_figure(ncols=2, width="double", aspect=0.5)
    assert fig.get_size_inches()[0] == pytest.approx(plotting.DOUBLE_COLUMN)
    assert fig.get_size_inches()[1] == pytest.approx(plotting.DOUBLE_COLUMN / 2 * 0.5)
    assert matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][0] == plotting.OKABE_ITO[0]
    with pytest.raises(ValueError, match="width"):
        plotting.new_figure(width="wide")


def test_show_figure_saves_closes_and_returns_nothing(tmp_path):
    fig = _figure()
    assert plotting.show_figure(fig, "nb", "shown", {"a": 1}, root=tmp_path) is None
    assert (tmp_path / "figures" / "nb" / "shown.pdf").exists()
    assert not matplotlib.pyplot.fignum_exists(fig.number)
    with pytest.raises(ValueError, match="name"):
        plotting.show_figure(_figure(), "nb", "a/b", root=tmp_path)
