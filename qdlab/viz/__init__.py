"""Visualisations of the pipeline: IR graphs, construct splits and cache status for notebooks."""
