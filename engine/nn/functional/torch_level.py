"""The nn ops PyTorch also has in its top namespace (torch.cdist, torch.selu, ...), as engine.<name>.

Most take the functional form's arguments; the others are adapted here. engine/__init__.py
star-imports this module.
"""

from __future__ import annotations

from ...ops.api import public
from . import activation, conv, distance, normalization, pooling, vision

cdist = public(distance.cdist, method=False)
cosine_similarity = public(distance.cosine_similarity, method=False)
pairwise_distance = public(distance.pairwise_distance, method=False)
selu = public(activation.selu, method=False)
selu_ = public(activation.selu_, method=False)
celu = public(activation.celu, method=False)
celu_ = public(activation.celu_, method=False)
pixel_shuffle = public(vision.pixel_shuffle, method=False)
pixel_unshuffle = public(vision.pixel_unshuffle, method=False)
adaptive_avg_pool1d = public(pooling.adaptive_avg_pool1d, method=False)
conv3d = public(conv.conv3d, method=False)
conv_transpose1d = public(conv.conv_transpose1d, method=False)
conv_transpose2d = public(conv.conv_transpose2d, method=False)
conv_transpose3d = public(conv.conv_transpose3d, method=False)
group_norm = public(normalization.aten_group_norm, method=False, name="group_norm")


@public(method=False)
def adaptive_max_pool1d(input, output_size):
    """torch.adaptive_max_pool1d: always the values and their indices."""
    return pooling.adaptive_max_pool1d(input, output_size, True)


@public(method=False)
def instance_norm(
    input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled
):
    """torch.instance_norm: ATen's argument order (F.instance_norm takes the running statistics first)."""
    return normalization.instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "cdist",
    "celu",
    "celu_",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_similarity",
    "group_norm",
    "instance_norm",
    "pairwise_distance",
    "pixel_shuffle",
    "pixel_unshuffle",
    "selu",
    "selu_",
]
