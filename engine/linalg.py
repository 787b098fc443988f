"""engine.linalg: torch.linalg's matrix functions (`import engine as torch; torch.linalg.svd(A)`).

They live in engine/ops/linalg_ops.py, where those whose torch.linalg form differs from the
`torch.` one (linalg.svd returns Vh, torch.svd V) are named `linalg_*`; this module names them
as torch.linalg does.
"""

from .ops.linalg_ops import LinAlgError, eigvalsh, matrix_norm, multi_dot, svdvals, vecdot
from .ops.linalg_ops import linalg_cholesky as cholesky
from .ops.linalg_ops import linalg_cross as cross
from .ops.linalg_ops import linalg_det as det
from .ops.linalg_ops import linalg_eigh as eigh
from .ops.linalg_ops import linalg_inv as inv
from .ops.linalg_ops import linalg_matmul as matmul
from .ops.linalg_ops import linalg_qr as qr
from .ops.linalg_ops import linalg_slogdet as slogdet
from .ops.linalg_ops import linalg_solve as solve
from .ops.linalg_ops import linalg_svd as svd
from .ops.reductions import linalg_norm as norm
from .ops.reductions import vector_norm

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
