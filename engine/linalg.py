"""engine.linalg: torch.linalg's matrix functions (`import engine as torch; torch.linalg.svd(A)`).

They live in engine/ops/linalg/functions.py, where those whose torch.linalg form differs from the
`torch.` one (linalg.svd returns Vh, torch.svd V) are named `linalg_*`; this module names them
as torch.linalg does.
"""

from .ops.linalg import functions as linalg_functions
from .ops.linalg.functions import LinAlgError, eigvalsh, matrix_norm, multi_dot, svdvals, vecdot
from .ops.linalg.functions import linalg_cholesky as cholesky
from .ops.linalg.functions import linalg_cross as cross
from .ops.linalg.functions import linalg_det as det
from .ops.linalg.functions import linalg_eigh as eigh
from .ops.linalg.functions import linalg_inv as inv
from .ops.linalg.functions import linalg_matmul as matmul
from .ops.linalg.functions import linalg_qr as qr
from .ops.linalg.functions import linalg_slogdet as slogdet
from .ops.linalg.functions import linalg_solve as solve
from .ops.linalg.functions import linalg_svd as svd
from .ops.reductions import functions as reductions_functions
from .ops.reductions.functions import vector_norm

__all__ = [
    "LinAlgError",
    "cholesky",
    "cross",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "multi_dot",
    "norm",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "vecdot",
    "vector_norm",
]


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a matrix order (or any order over two dims) is matrix_norm's, the rest the
    reductions' vector norm, which also makes torch's argument checks."""
    dims = None if dim is None else (tuple(dim) if isinstance(dim, (tuple, list)) else (dim,))
    over_matrix = dims is not None and len(dims) == 2 or dims is None and ord is not None and A.dim() == 2
    if isinstance(ord, str) or (ord is not None and over_matrix):
        return linalg_functions.matrix_norm(A, ord, (-2, -1) if dims is None else dims, keepdim, dtype=dtype)
    return reductions_functions.linalg_norm(A, ord, dim, keepdim, dtype=dtype)
