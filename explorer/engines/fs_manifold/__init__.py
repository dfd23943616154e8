"""FS-Manifold's engine: the kNN graph, its Laplacian and the manifold-regularised kernel
(paper eq. 6), and the SVM dual that is the level method's oracle (Alg. 2)."""

from .graph import (
    GRAPHS,
    GraphStopped,
    Neighbours,
    adjacency,
    knn_graph,
    laplacian,
    nearest_neighbours,
)
from .manifold import (
    ROUTES,
    ManifoldKernel,
    kernel_route,
    manifold_kernel,
    manifold_kernel_direct,
)
from .svm_dual import svm_dual

__all__ = ["GRAPHS", "ROUTES", "GraphStopped", "ManifoldKernel", "Neighbours", "adjacency",
           "kernel_route", "knn_graph", "laplacian", "manifold_kernel", "manifold_kernel_direct",
           "nearest_neighbours", "svm_dual"]
