"""`get_colors`: n distinct colors for plots, as 'rgba(...)' strings or (r, g, b, a) numbers."""
from __future__ import annotations

import colorsys
from typing import List, Literal, Tuple, Union, overload

from fe_core.export import fe_export

__all__ = ["get_colors"]

# A qualitative palette of 10 well-separated colors (8-bit RGB), used while n_colors <= 10.
_PALETTE = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
            (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207))


def _rgb_values(n_colors: int) -> List[Tuple[int, int, int]]:
    if n_colors <= len(_PALETTE):
        return list(_PALETTE[:n_colors])
    colors = []
    for index in range(n_colors):  # evenly spaced hues, alternating lightness so neighbours differ
        lightness = 0.45 if index % 2 == 0 else 0.6
        red, green, blue = colorsys.hls_to_rgb(index / n_colors, lightness, 0.75)
        colors.append((round(red * 255), round(green * 255), round(blue * 255)))
    return colors


@overload
def get_colors(n_colors: int, as_numbers: Literal[False] = False, alpha: float = 1.0) -> List[str]:
    ...


@overload
def get_colors(n_colors: int, as_numbers: Literal[True], alpha: float = 1.0) -> List[Tuple[float, float, float, float]]:
    ...


@fe_export("fe.util.base_util.get_colors", "fe.util.get_colors")
def get_colors(n_colors: int, as_numbers: bool = False,
               alpha: float = 1.0) -> Union[List[str], List[Tuple[float, float, float, float]]]:
    """Get a list of distinct colors to use in plotting.

    Example:
        >>> get_colors(2)
        ['rgba(31,119,180,1.0)', 'rgba(255,127,14,1.0)']
        >>> get_colors(1, as_numbers=True, alpha=0.5)
        [(31, 119, 180, 0.5)]

    Args:
        n_colors: How many colors to return.
        as_numbers: Whether to return the values as (r, g, b, a) numbers (r, g, b in 0..255, a in 0..1) instead of
            'rgba(r,g,b,a)' strings.
        alpha: What opacity value to use (0 to 1).

    Returns:
        A list of `n_colors` rgba colors.

    Raises:
        ValueError: If `alpha` is outside [0, 1] or `n_colors` is negative.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"get_colors: alpha must be within [0, 1], got {alpha}")
    if n_colors < 0:
        raise ValueError(f"get_colors: n_colors must be >= 0, got {n_colors}")
    colors = _rgb_values(n_colors)
    if as_numbers:
        return [(red, green, blue, alpha) for red, green, blue in colors]
    return [f"rgba({red},{green},{blue},{alpha})" for red, green, blue in colors]
