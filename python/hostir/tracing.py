"""hostir.tracing: a Chrome / Perfetto trace of a stretch of a program.

    with hostir.trace("layer.json") as written:
        fd.execute(inputs)
    print(written.path)        # layer.json, or layer.rank1.json under a launcher

Records every work item hostir's streams run inside the block (compute,
collectives in flight, waits; one row per stream) and writes them when the
block ends, as HOSTIR_TRACE does for a whole process (docs/streams.md,
"Traces"). Under a launcher each rank writes its own file (`.rankN` before
`.json`); `hostir trace merge` puts them side by side. Inside a trace that is
already recording (HOSTIR_TRACE, or an enclosing `trace`) the block's file
holds the block's work items and the outer trace goes on, whole.
"""

import os

from . import _C
from .fusion_state import Error

__all__ = ["trace"]


class trace:  # noqa: N801 (used as a context manager, like open)
    """Context manager: traces the block and writes `path` (per rank) at its
    end. `.path` is the file written and `.events` how many work items were
    recorded, both set when the block ends (also when it raises)."""

    def __init__(self, path):
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise Error(f"trace: the folder of '{path}' does not exist; give a path in an "
                        f"existing folder")
        self._requested = path
        self.path = None
        self.events = 0

    def __enter__(self):
        self._was_recording, self._first_event = _C.trace_begin()
        return self

    def __exit__(self, *exc):
        self.path, self.events = _C.trace_end(self._was_recording, self._first_event,
                                              self._requested)
        return False
