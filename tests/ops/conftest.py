import os
from pathlib import Path

import pytest

# conv2d(padding="same") with an even kernel warns as torch does; the samples call it on purpose.
SAME_PADDING = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
# ENGINE_MODULE=torch reruns other files' expectations on torch; the registry compares with torch itself.
ON_TORCH = pytest.mark.skip(
    reason="ENGINE_MODULE is not the engine: the registry's torch_parity tests compare with torch"
)

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if item.path.parent == HERE:
            item.add_marker(SAME_PADDING)
            if os.environ.get("ENGINE_MODULE", "engine") != "engine":
                item.add_marker(ON_TORCH)
