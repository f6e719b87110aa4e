"""What every bench plot shares: matplotlib without a display, and the finish.

matplotlib is optional: ``pyplot()`` is None without it, and the bench prints
that the plot was skipped.
"""

from __future__ import annotations

from pathlib import Path


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def finish(plt, fig, ax, path: Path, title: str, alt: str) -> str:
    """Title, legend, save to ``path``; the markdown image line for docs/benchmarks.md."""
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"![{alt}]({path.name})"
