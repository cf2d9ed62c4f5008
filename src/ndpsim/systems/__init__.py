"""Simulated systems, each assembled from hardware components and policies."""
