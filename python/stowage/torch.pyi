import os
from typing import Any, Callable, Sequence

import torch.utils.data

from . import Records

class RecordsDataset(torch.utils.data.Dataset[Any]):
    path: str | os.PathLike[str]
    node: str
    format: str | None
    plugin_path: Sequence[str] | None
    decode: bool
    transform: Callable[[Any], Any] | None
    def __init__(self, path: str | os.PathLike[str], decode: bool = True, transform: Callable[[Any], Any] | None = None,
                 *, node: str = "", format: str | None = None, plugin_path: Sequence[str] | None = None) -> None: ...
    @property
    def records(self) -> Records: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Any: ...
