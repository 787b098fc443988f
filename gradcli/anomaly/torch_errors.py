"""The error findings only torch's instrument can explain: a saved tensor modified in place (its
record), NaN/Inf in a node's backward (the node's name and line, carried by the error).

Other torch errors go through `error_kinds.classify` like the engine's: the instrument tags
torch's leaf-in-place error as the engine tags its own, and errors raised in torch.autograd are
autograd errors.
"""

from __future__ import annotations

from ..program.exception_text import message_of
from ..program.names import TensorNames
from ..program.sites import Sites, raise_site, user_tb_frames
from .error_kinds import modified_saved_finding
from .findings import Finding
from .nonfinite import backward_finding
from .torch_instrument import TorchInstrument


def classify_torch(exc: BaseException, instrument: TorchInstrument, sites: Sites, module) -> Finding | None:
    """The finding for an error raised by the torch instrument's hooks, or None."""
    record = getattr(exc, "saved_record", None)
    if record is not None:
        names = TensorNames(module, [frame for frame, _ in user_tb_frames(exc.__traceback__)])
        original = record.ref()
        tensor = record.tensor
        return modified_saved_finding(
            name=names.of(original if original is not None else tensor),
            type_name=tensor.type(),
            shape=list(tensor.shape),
            saver=record.saver,
            saved_site=record.site,
            expected=record.version,
            current=tensor._version,
            bumps=instrument.modifications(record),
            here=raise_site(exc, sites),
            error=message_of(exc),
            sites=sites,
            module=instrument.module_of_change(record),
        )
    if hasattr(exc, "node_name"):
        return backward_finding(
            exc,
            exc.node_name,
            exc.node_site,
            raise_site(exc, sites),
            exc.stats,
            sites,
            getattr(exc, "diagnosis", None),
        )
    return None
