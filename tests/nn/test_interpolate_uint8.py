"""interpolate of uint8 images against torch 2.13, bit for bit: bilinear and bicubic (antialiased or not)
resample in torch's fixed-point arithmetic (the nearest modes' uint8 gathers are in test_nn_more.py)."""

import numpy as np
import pytest

import engine

F = engine.nn.functional


def _cases(seed: int, count: int):
    """Random images (1-4 channels, a batch of 1-2, spatial sizes 1-20) and output sizes or scale factors."""
    rng = np.random.RandomState(seed)
    for _ in range(count):
        shape = (rng.randint(1, 3), int(rng.choice([1, 3, 4])), rng.randint(1, 21), rng.randint(1, 21))
        image = rng.randint(0, 256, shape).astype(np.uint8)
        if rng.rand() < 0.5:
            yield image, {"size": (int(rng.randint(1, 31)), int(rng.randint(1, 31)))}
        else:
            factors = tuple(float(rng.uniform(max(0.2, 1.01 / n), 4.0)) for n in shape[2:])  # sizes >= 1
            yield image, {"scale_factor": factors}


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("align_corners", [False, True])
def test_uint8_resampling_matches_torch_bit_for_bit(torch, mode, antialias, align_corners):
    seed = ["bilinear", "bicubic"].index(mode) * 4 + 2 * antialias + align_corners
    for image, kwargs in _cases(seed, 60):
        options = dict(kwargs, mode=mode, align_corners=align_corners, antialias=antialias)
        expected = torch.nn.functional.interpolate(torch.from_numpy(image), **options)
        got = F.interpolate(engine.tensor(image), **options)
        assert got.dtype is engine.uint8
        assert np.array_equal(got.numpy(), expected.numpy()), (image.shape, kwargs)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_uint8_resampling_of_channels_last_and_many_channels_matches_torch(torch, mode):
    image = np.random.RandomState(7).randint(0, 256, (2, 6, 9, 13)).astype(np.uint8)
    for antialias in (False, True):
        options = {"size": (5, 17), "mode": mode, "antialias": antialias}
        source = torch.from_numpy(image)
        expected = torch.nn.functional.interpolate(
            source.contiguous(memory_format=torch.channels_last), **options
        )
        assert np.array_equal(F.interpolate(engine.tensor(image), **options).numpy(), expected.numpy())
        expected = torch.nn.functional.interpolate(source, **options)
        assert np.array_equal(F.interpolate(engine.tensor(image), **options).numpy(), expected.numpy())


def test_uint8_resampling_of_many_channels_to_width_one_resamples_every_row():
    """torch's generic uint8 kernel (more than 4 channels) repeats the first output row when the output
    width is 1; the engine gives every row its own value, as torch's kernel for up to 4 channels does."""
    image = np.random.RandomState(3).randint(0, 256, (1, 8, 8, 15)).astype(np.uint8)
    whole = F.interpolate(engine.tensor(image), size=(10, 1), mode="bilinear", align_corners=True).numpy()
    halves = [
        F.interpolate(engine.tensor(part), size=(10, 1), mode="bilinear", align_corners=True).numpy()
        for part in (image[:, :4], image[:, 4:])
    ]
    assert np.array_equal(whole, np.concatenate(halves, axis=1))
    assert len(set(whole[0, 0, :, 0].tolist())) > 1


def test_antialiased_interpolation_refuses_other_integer_dtypes(lib):
    with pytest.raises(
        NotImplementedError, match="\"compute_index_ranges_weights\" not implemented for 'Int'"
    ):
        lib.nn.functional.interpolate(
            lib.ones(1, 1, 4, 4, dtype=lib.int32), size=3, mode="bilinear", antialias=True
        )
