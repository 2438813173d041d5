"""PyTorch datasets over stowage record sets (datadings)."""

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
    """

    def __init__(self, path, decode=True, transform=None, *, node="", format=None, plugin_path=None):
        self.path = path
        self.node = node
        self.format = format
        self.plugin_path = plugin_path
        self.decode = decode
        self.transform = transform
        self._records = None
        self._length = len(self.records)

    @property
    def records(self):
        """The open :class:`stowage.Records` (opened in this process on first use)."""
        if self._records is None:
            store = open(self.path, "r", self.format, plugin_path=self.plugin_path)
            records = store[self.node]
            if not isinstance(records, Records):
                raise TypeError(f"{self.path}: node {self.node!r} is not a record set")
            self._records = records
        return self._records

    def __len__(self):
        return self._length

    def __getitem__(self, index):
        records = self.records
        sample = records[index] if self.decode else records.raw(index)
        return self.transform(sample) if self.transform is not None else sample

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_records"] = None  # reopened in the worker
        return state
