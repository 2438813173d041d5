"""PyTorch datasets over stowage record sets (datadings)."""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

import torch.utils.data

from ._nodes import Records, open

__all__ = ["RecordsDataset"]


class RecordsDataset(torch.utils.data.Dataset):
    """A map-style ``torch.utils.data.Dataset`` over a datadings set.

    ``dataset[i]`` is sample ``i`` decoded (a dict with numpy arrays, as
    datadings' reader gives it) or, with ``decode=False``, its msgpack
    bytes. ``transform`` (optional) is applied to each sample. Works with
    ``DataLoader(num_workers=N)``: each worker opens the set itself, on
    first use (nothing open crosses a process boundary).

    Unlike ``datadings.torch.Dataset`` it takes a path, not an open reader,
    and any stowage format that holds record sets::

        from torch.utils.data import DataLoader
        from stowage.torch import RecordsDataset

        ds = RecordsDataset("train.msgpack", transform=lambda s: s["image"])
        for batch in DataLoader(ds, batch_size=32, num_workers=2):
            ...
    """

    path: str | os.PathLike[str]
    node: str
    format: str | None
    plugin_path: Sequence[str | os.PathLike[str]] | None
    decode: bool
    transform: Callable[[Any], Any] | None

    def __init__(self, path: str | os.PathLike[str], decode: bool = True,
                 transform: Callable[[Any], Any] | None = None, *, node: str = "",
                 format: str | None = None, plugin_path: Sequence[str | os.PathLike[str]] | None = None) -> None:
        self.path = path
        self.node = node
        self.format = format
        self.plugin_path = plugin_path
        self.decode = decode
        self.transform = transform
        self._records: Records | None = None
        self._length = len(self.records)

    @property
    def records(self) -> Records:
        """The open :class:`stowage.Records` (opened in this process on first use)::

            ds = RecordsDataset("train.msgpack")
            ds.records.key(0)              # the first sample's key
        """
        if self._records is None:
            store = open(self.path, "r", self.format, plugin_path=self.plugin_path)
            records = store[self.node]
            if not isinstance(records, Records):
                raise TypeError(f"{self.path}: node {self.node!r} is not a record set")
            self._records = records
        return self._records

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> Any:
        records = self.records
        sample = records[index] if self.decode else records.raw(index)
        return self.transform(sample) if self.transform is not None else sample

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_records"] = None  # reopened in the worker
        return state
