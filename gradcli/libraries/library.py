"""What gradcli asks of a tensor library: one object per library (`engine.ENGINE`, `torch.TORCH`).

A concern whose code differs per library either calls a method here, or, when its pieces are its
own (a graph reader, a cut recorder, an error classifier), hands them to `Library.pick` as a
`PerLibrary` and gets back its library's one: the concern keeps its pieces, the library decides.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T", covariant=True)


class PerLibrary(Protocol, Generic[T]):
    """A concern's piece for each library, made only for the library that asks (`Library.pick`)."""

    def engine(self) -> T: ...

    def torch(self) -> T: ...


class Library(ABC):
    """A tensor library as gradcli sees it, never importing it: a user's file does."""

    #: "engine" or "torch": for JSON and messages only, never to branch on.
    name: str
    #: The top-level module a user's file imports (`for_files` reads imports).
    module: str
    #: A checkable input as a user of this library writes it, for messages.
    inputs_hint: str

    @abstractmethod
    def pick(self, pieces: PerLibrary[Any]) -> Any:
        """This library's piece of `pieces`."""

    @abstractmethod
    def loaded(self) -> bool:
        """Whether the library has been imported (by the user's file, for torch)."""

    @abstractmethod
    def is_tensor(self, value: Any) -> bool:
        """A tensor of this library, by its real type (never a user's `__class__`)."""

    def is_uninitialized(self, value: Any) -> bool:
        """A parameter without a shape yet (a lazy module's, before its first call)."""
        return False

    @abstractmethod
    def seeded(self, seed: int) -> AbstractContextManager[None]:
        """For the block: the library's generators seeded with `seed` (torch: once imported)."""

    @abstractmethod
    def seed(self, seed: int) -> None:
        """Seed the library's generators now, if it is loaded."""

    @abstractmethod
    def on_device(self, device: str, used: bool) -> AbstractContextManager[None]:
        """For the block: `device` as the library's default device, when the files run `used`
        it (torch: once imported, on any device but the CPU), put back afterwards."""

    @abstractmethod
    def random_state(self) -> Callable[[], None] | None:
        """The library's generators' states, as a function that puts them back (None: none kept)."""

    @abstractmethod
    def saved_state(self) -> AbstractContextManager[Callable[[], None]]:
        """For the block: a function that puts back the grad and anomaly mode, default dtype and
        device the library had when the block began (torch: when it was imported)."""

    @abstractmethod
    def enable_grad(self) -> AbstractContextManager[Any]:
        """The library's grad mode, on."""

    @abstractmethod
    def gradcheck_tensors(self) -> Any:
        """engine's gradcheck `Tensors` for this library's tensors (one algorithm checks both)."""
