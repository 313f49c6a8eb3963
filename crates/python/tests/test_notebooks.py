"""The book's notebooks run as written with this package (nbclient): a
notebook that no longer runs fails here rather than rot in the book."""

import pathlib

import nbclient
import nbformat
import pytest

BOOK = pathlib.Path(__file__).resolve().parents[3] / "book" / "src" / "notebooks"
NOTEBOOKS = sorted(BOOK.glob("*.ipynb"))


def test_the_book_has_notebooks():
    assert NOTEBOOKS, f"no notebook in {BOOK}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    # The study cell made its grid: six workloads x two machines x four
    # policies x three seeds x two core orders.
    shape = nb.cells[1].outputs[-1]["data"]["text/plain"]
    assert shape == "(288, 25)"
