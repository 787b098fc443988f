"""`Check`: one gradcheck, run in torch's order.

Inputs are validated, the function runs once (the reference forward), the Jacobians are
compared (full or fast mode), then backward is checked with zero and with undefined
grad_outputs. The steps themselves live in numerical.py, analytical.py, compare.py and
backward_checks.py; this module only decides what runs and when.
"""

from __future__ import annotations

import numpy

from .analytical import checked_analytical, checked_vjps
from .backward_checks import check_undefined_grads, check_zero_grad_outputs
from .batched_checks import check_batched_forward_grad, check_batched_grad
from .compare import compare_fast, compare_full
from .determinism import RANDOM, ForwardProbe, describe
from .forward import forward_jacobians, forward_jvps
from .messages import NO_INPUT_REQUIRES_GRAD, STRIDE_ZERO
from .numerical import check_numerical_is_zero, numerical_jacobians, numerical_jvps, numerics_need_grad
from .report import NONDETERMINISTIC_FORWARD, RANDOM_FORWARD
from .state import Abort, CheckState
from .util import FAST_MODE_SEED, as_tuple, unit_vector


class Check(CheckState):
    """One gradcheck of `func` at `inputs` (see CheckState for `strict` and the indexing)."""

    def run(self) -> None:
        """torch's order: inputs, forward, reverse mode's Jacobians, forward mode's (check_forward_ad),
        batched forward gradients, batched gradients, zero grad_outputs, undefined grads."""
        self._validate_inputs()
        probe = None if self.strict or self.order > 1 else ForwardProbe(self)
        out = self.user("forward", self.func, *self.inputs)
        self.forward_ran = True
        outs = as_tuple(out)
        if probe is not None:
            self._check_deterministic(probe, outs)
        self.output_count = len(outs)
        is_tensor = self.tensors.is_tensor
        for o in outs:  # torch reads requires_grad of every output: no outputs at all is fine
            if not is_tensor(o):
                self.error(AttributeError(f"'{type(o).__name__}' object has no attribute 'requires_grad'"))
        self.outputs = [(k, o) for k, o in enumerate(outs) if o.requires_grad]
        float_outputs = [(k, o) for k, o in enumerate(outs) if o.dtype.is_floating_point]
        self.numerics_need_grad = numerics_need_grad(self, float_outputs)
        if not self.outputs:
            check_numerical_is_zero(self, float_outputs)
            return
        opts = self.opts
        if opts.check_backward_ad:
            self._fast_mode() if opts.fast_mode else self._full_mode()
        if opts.check_forward_ad:
            try:
                self._forward_fast() if opts.fast_mode else self._forward_full()
            except Abort:  # forward mode unsupported (a note), or its forward raised (recorded)
                pass
        if opts.check_batched_forward_grad:
            check_batched_forward_grad(self)
        if not opts.check_backward_ad:
            return
        if opts.check_batched_grad:
            for out_rank in range(len(self.outputs)):
                check_batched_grad(self, out_rank)
        if not self.backward_failed:
            check_zero_grad_outputs(self)
            if opts.check_undefined_grad:
                check_undefined_grads(self)

    def _check_deterministic(self, probe: ForwardProbe, outs: tuple) -> None:
        """A forward that changes between calls ends the check (determinism.py)."""
        drift = self.user("the forward's determinism check", probe.drift, outs)
        if drift is not None:
            self.report.forward_drift = drift
            kind = RANDOM_FORWARD if drift.kind == RANDOM else NONDETERMINISTIC_FORWARD
            text = describe(drift)
            self.fail(text, text, kind=kind)
            raise Abort

    def _validate_inputs(self) -> None:
        """torch's _check_inputs: something must require grad; no stride-0 (expanded) input."""
        for idx, t in self.diff_inputs:
            array = self.tensors.storage(t)
            if array.size > 1 and any(st == 0 and n > 1 for st, n in zip(array.strides, array.shape)):
                self.error(RuntimeError(STRIDE_ZERO.format(idx=idx)))
        if not self.diff_inputs:
            self.error(ValueError(NO_INPUT_REQUIRES_GRAD))

    def _full_mode(self) -> None:
        """Every entry of every Jacobian: numerical for all inputs first, then per output."""
        numerical = [numerical_jacobians(self, rank) for rank in range(len(self.diff_inputs))]
        for out_rank in range(len(self.outputs)):
            try:
                analytical = checked_analytical(self, out_rank)
            except Abort:
                continue
            for in_rank, ana in enumerate(analytical):
                if ana is not None:
                    compare_full(self, out_rank, in_rank, numerical[in_rank][out_rank], ana)

    def _forward_full(self) -> None:
        """Forward mode, after reverse mode as in torch: every Jacobian again, column by column."""
        for in_rank in range(len(self.diff_inputs)):
            numerical = numerical_jacobians(self, in_rank)
            for out_rank, ana in enumerate(forward_jacobians(self, in_rank)):
                compare_full(self, out_rank, in_rank, numerical[out_rank], ana, mode="fwd")

    def _forward_fast(self) -> None:
        """v^T J u with J u from one forward-mode forward per input (torch's fast mode)."""
        us, vs = self._directions()
        for in_rank, ((pos, t), u) in enumerate(zip(self.diff_inputs, us)):
            numerical = numerical_jvps(self, pos, t, u, self.outputs)
            analytical = forward_jvps(self, in_rank, u)
            for out_rank, v in enumerate(vs):
                atol = self.opts.atol * float(u.sum()) * float(v.sum())
                num, ana = float(v @ numerical[out_rank]), float(v @ analytical[out_rank])
                compare_fast(self, out_rank, in_rank, num, ana, atol, mode="fwd")

    def _directions(self) -> tuple[list, list]:
        """Fast mode's u per input and v per output, from torch's fixed seed (reruns agree)."""
        rng = numpy.random.default_rng(FAST_MODE_SEED)
        numel = self.tensors.numel
        us = [unit_vector(rng, numel(t)) for _, t in self.diff_inputs]
        return us, [unit_vector(rng, numel(o)) for _, o in self.outputs]

    def _fast_mode(self) -> None:
        """v^T J u per pair (torch's fast mode); a pair that disagrees is localised."""
        us, vs = self._directions()
        numerical = [
            [float(v @ ju) for v, ju in zip(vs, numerical_jvps(self, pos, t, u, self.outputs))]
            for (pos, t), u in zip(self.diff_inputs, us)
        ]
        analytical = []
        for out_rank, v in enumerate(vs):
            try:
                vjps = checked_vjps(self, out_rank, lambda v=v: [v], 1)
            except Abort:
                analytical.append(None)
                continue
            analytical.append([None if vj is None else float(vj[0] @ u) for vj, u in zip(vjps, us)])
        for in_rank, u in enumerate(us):
            for out_rank, v in enumerate(vs):
                if analytical[out_rank] is None or analytical[out_rank][in_rank] is None:
                    continue
                atol = self.opts.atol * float(u.sum()) * float(v.sum())
                compare_fast(
                    self, out_rank, in_rank, numerical[in_rank][out_rank], analytical[out_rank][in_rank], atol
                )
