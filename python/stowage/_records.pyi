# The extension module python/src/records.cpp: datadings samples decoded for
# stowage.Records. Use the stowage package; these are its building blocks.
from typing import Any

def decode_sample(data: bytes) -> Any: ...

decoder: object  # a capsule for _core.Records.read_range (python/src/sample_decoder.h)
