"""FS-Manifold's engine: the kNN graph, its Laplacian and the manifold-regularised kernel
(paper eq. 6), and the SVM dual that is the level method's oracle (Alg. 2)."""

from .manifold import ManifoldKernel, knn_graph, laplacian, manifold_kernel, manifold_kernel_direct
from .svm_dual import svm_dual

__all__ = ["ManifoldKernel", "knn_graph", "laplacian", "manifold_kernel",
           "manifold_kernel_direct", "svm_dual"]
