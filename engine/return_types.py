"""The named results of ops that return several tensors (torch.return_types).

Each is a tuple with named fields, as torch's structseqs are: it indexes, unpacks and names its
fields like a namedtuple, and prints as torch prints it, one field a line:

    engine.return_types.max(
    values=tensor([3.]),
    indices=tensor([1]))
"""

import collections


def _structseq(name: str, fields: str) -> type:
    base = collections.namedtuple(name, fields)

    def __repr__(self) -> str:
        items = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"{__name__}.{name}(\n{items})"

    return type(
        name, (base,), {"__slots__": (), "__module__": __name__, "__qualname__": name, "__repr__": __repr__}
    )


aminmax = _structseq("aminmax", "min max")
cummax = _structseq("cummax", "values indices")
cummin = _structseq("cummin", "values indices")
kthvalue = _structseq("kthvalue", "values indices")
max = _structseq("max", "values indices")  # noqa: A001  (torch.return_types.max)
median = _structseq("median", "values indices")
min = _structseq("min", "values indices")  # noqa: A001
mode = _structseq("mode", "values indices")
nanmedian = _structseq("nanmedian", "values indices")
sort = _structseq("sort", "values indices")
topk = _structseq("topk", "values indices")
linalg_eigh = _structseq("linalg_eigh", "eigenvalues eigenvectors")
linalg_qr = _structseq("linalg_qr", "Q R")
linalg_slogdet = _structseq("linalg_slogdet", "sign logabsdet")
linalg_svd = _structseq("linalg_svd", "U S Vh")
qr = _structseq("qr", "Q R")
slogdet = _structseq("slogdet", "sign logabsdet")
svd = _structseq("svd", "U S V")
