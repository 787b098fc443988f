"""pixel_shuffle and pixel_unshuffle: sub-pixel rearrangements, one row each (their backwards are each other)."""

from __future__ import annotations

from ...ops import derivatives as D
from ...ops.op import apply_op
from ...tensor import Tensor


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r) (PixelShuffleBackward0)."""
    if input.dim() < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with {input.dim()} dimension(s)"
        )
    if upscale_factor <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {upscale_factor}")
    c, square = input.shape[-3], upscale_factor * upscale_factor
    if c % square:
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
            f"but input.size(-3)={c} is not divisible by {square}"
        )
    return apply_op(D.PIXEL_SHUFFLE, (input,), (upscale_factor,))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W) (PixelUnshuffleBackward0)."""
    if input.dim() < 3:
        raise RuntimeError(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    if downscale_factor <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {downscale_factor}")
    for name, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % downscale_factor:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but input.size({dim})="
                f"{input.shape[dim]} is not divisible by {downscale_factor}"
            )
    return apply_op(D.PIXEL_UNSHUFFLE, (input,), (downscale_factor,))
