"""Search visualisation with plotly (the `plot` extra): cartesian plots, heatmaps, parallel coordinates."""
from fe_core.search.visualize.cartesian import plot_cartesian, visualize_cartesian
from fe_core.search.visualize.heatmap import plot_heatmap, visualize_heatmap
from fe_core.search.visualize.parallel_coordinate_plot import plot_parallel_coordinates, visualize_parallel_coordinates
from fe_core.search.visualize.visualize import visualize_search

__all__ = ["plot_cartesian", "visualize_cartesian", "plot_heatmap", "visualize_heatmap", "plot_parallel_coordinates",
           "visualize_parallel_coordinates", "visualize_search"]
