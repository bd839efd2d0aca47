"""Figures drawn straight to files, leaving the user's matplotlib as it was.

The package's pictures are matplotlib :class:`~matplotlib.figure.Figure` objects
made without pyplot: no backend is selected, no figure is registered, so a
notebook's inline plots keep showing after a report is drawn (selecting the Agg
backend, as the pictures once did, silenced them for the rest of the session).
:data:`FIGURES` answers ``subplots``, ``figure`` and ``close`` as pyplot does.

Example
-------
>>> import matplotlib, tempfile, pathlib
>>> before = matplotlib.get_backend()
>>> fig, ax = FIGURES.subplots(1, 2, figsize=(4, 2))
>>> _ = ax[0].plot([0, 1]); fig.savefig(pathlib.Path(tempfile.mkdtemp()) / "a.png")
>>> matplotlib.get_backend() == before
True
"""

from __future__ import annotations

from matplotlib.figure import Figure

FIGURE_KEYWORDS = frozenset(
    {"figsize", "dpi", "facecolor", "edgecolor", "linewidth", "frameon", "layout",
     "constrained_layout", "tight_layout"}
)  # fmt: skip


class Figures:
    """pyplot's ``subplots``, ``figure`` and ``close`` for figures saved to files only."""

    @staticmethod
    def figure(**kwargs) -> Figure:
        """A new figure (``Figure``'s keywords: ``figsize``, ``constrained_layout``, ...)."""
        return Figure(**kwargs)

    @staticmethod
    def subplots(nrows: int = 1, ncols: int = 1, **kwargs):
        """``(figure, axes)`` as ``pyplot.subplots`` gives them."""
        fig = Figure(**{k: kwargs.pop(k) for k in list(kwargs) if k in FIGURE_KEYWORDS})
        return fig, fig.subplots(nrows, ncols, **kwargs)

    @staticmethod
    def close(fig=None) -> None:
        """Forget ``fig``: one made here holds nothing pyplot would need to release."""
        if fig is not None and getattr(fig, "number", None) is not None:
            import matplotlib.pyplot as plt  # a figure another library made with pyplot

            plt.close(fig)


FIGURES = Figures()
