"""The nn ops PyTorch also has in its top namespace (torch.cdist, torch.selu, ...), as engine.<name>.

Only those whose torch.<name> takes the functional form's arguments; engine/__init__.py
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

__all__ = [
    "adaptive_avg_pool1d",
    "cdist",
    "celu",
    "celu_",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_similarity",
    "group_norm",
    "pairwise_distance",
    "pixel_shuffle",
    "pixel_unshuffle",
    "selu",
    "selu_",
]
