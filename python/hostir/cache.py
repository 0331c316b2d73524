"""FusionCache: definitions stored as a trie of records.

Each trie edge is one record (its JSON key); a definition is the path from the
root to the node holding its entry, so definitions sharing a prefix of records
share those nodes. An entry holds the C++ fusion built from the records (with
its per-input-signature lowered programs, kept in C++), the FusionState and a
fusion id. Entries are evicted least-recently-used beyond `max_fusions`.

The cache serializes to one JSON file (format and hostir version, a checksum
of the payload, the records and state of every entry); reading a file that is
missing, truncated, corrupt or of another version warns and gives an empty
cache.
"""

import atexit
import collections
import hashlib
import json
import os
import re
import warnings

from . import _C
from ._version import __version__
from .fusion_state import FusionState
from .records import Record, apply

FORMAT = "hostir.FusionCache"
FORMAT_VERSION = 1


class CacheEntry:
    __slots__ = ("id", "records", "state", "_definition", "segments", "node")

    def __init__(self, fusion_id, records, state, definition, node):
        self.id = fusion_id
        self.records = records
        self.state = state
        self._definition = definition  # C++ Definition; None until built
        self.segments = None
        self.node = node

    def definition(self):
        """The C++ fusion, built from the records on first use (entries read
        from a file)."""
        if self._definition is None:
            definition = _C.Definition()
            kinds = []
            for record in self.records:
                outputs = apply(definition, record.kind, record.args)
                if outputs != record.outputs:
                    raise _C.Error(
                        f"hostir internal error (a bug, please report): rebuilding fusion "
                        f"{self.id} from its records gave fids {outputs} for {record.key}")
                for fid in outputs:
                    kinds += ["?"] * (fid + 1 - len(kinds))
                    kinds[fid] = "T" if definition.is_tensor(fid) else "S"
            rebuilt = FusionState.of(definition, kinds)
            if rebuilt != self.state:
                raise _C.Error(f"hostir internal error (a bug, please report): fusion {self.id} "
                               f"rebuilt from its records has state {rebuilt}, the cache "
                               f"stored {self.state}")
            self._definition = definition
        return self._definition


class _Node:
    __slots__ = ("children", "entry", "parent", "key")

    def __init__(self, parent, key):
        self.children = {}
        self.entry = None
        self.parent = parent
        self.key = key


class _OnInstanceOrDefault:
    """A method that, called on the class (nvFuser's static FusionCache.reset()),
    acts on the default instance FusionCache.get()."""

    def __init__(self, method):
        self._method = method
        self.__doc__ = method.__doc__

    def __get__(self, instance, owner):
        return self._method.__get__(owner.get() if instance is None else instance, owner)


class FusionCache:
    """Definitions by their records. `FusionCache.get()` is the default
    instance (used by FusionDefinition unless given another); create others
    with `FusionCache(max_fusions=...)`."""

    _default = None

    def __init__(self, max_fusions=1024):
        if max_fusions < 1:
            raise _C.Error(f"FusionCache: max_fusions must be at least 1, got {max_fusions}")
        self.max_fusions = int(max_fusions)
        self.reset()

    @classmethod
    def get(cls):
        """The process's default cache. With HOSTIR_CACHE_DIR set it is loaded
        from that directory on first use and saved there at exit (one file
        per rank)."""
        if cls._default is None:
            path = default_cache_path()
            if path is not None and os.path.exists(path):
                cls._default = cls.deserialize(path)
            else:
                cls._default = cls()
            if path is not None:
                atexit.register(_save_default, path)
        return cls._default

    @_OnInstanceOrDefault
    def reset(self):
        """Forgets every definition and zeroes the statistics (FusionCache.reset()
        on the class: the default cache's, as nvFuser's)."""
        self._root = _Node(None, None)
        self._entries = collections.OrderedDict()  # id -> entry, least recent first
        self._num_nodes = 0
        self._next_id = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def num_fusions(self):
        return len(self._entries)

    def stats(self):
        """hits, misses, fusions (cached now), records (trie nodes: a record
        shared by several definitions counts once), evictions."""
        return {"hits": self.hits, "misses": self.misses, "fusions": len(self._entries),
                "records": self._num_nodes, "evictions": self.evictions}

    def fusion_ids(self):
        """Cached fusion ids, least recently used first."""
        return list(self._entries)

    # --- lookup -------------------------------------------------------------

    def _walk(self, records, create):
        node = self._root
        for record in records:
            child = node.children.get(record.key)
            if child is None:
                if not create:
                    return None
                child = _Node(node, record.key)
                node.children[record.key] = child
                self._num_nodes += 1
            node = child
        return node

    def _lookup_or_insert(self, records, definition, make_state):
        """The entry for `records` and whether it was a hit. On a miss the
        live `definition` and its state (`make_state()`) are stored."""
        node = self._walk(records, create=False)
        if node is not None and node.entry is not None:
            self.hits += 1
            self._entries.move_to_end(node.entry.id)
            return node.entry, True
        self.misses += 1
        node = self._walk(records, create=True)
        entry = self._insert(node, self._next_id, list(records), make_state(), definition)
        self._next_id += 1
        return entry, False

    def _insert(self, node, fusion_id, records, state, definition):
        entry = CacheEntry(fusion_id, records, state, definition, node)
        node.entry = entry
        self._entries[fusion_id] = entry
        while len(self._entries) > self.max_fusions:
            _, victim = self._entries.popitem(last=False)
            self._evict(victim)
        return entry

    def _evict(self, entry):
        self.evictions += 1
        node = entry.node
        node.entry = None
        while node is not self._root and not node.children and node.entry is None:
            del node.parent.children[node.key]
            self._num_nodes -= 1
            node = node.parent

    # --- serialization ----------------------------------------------------------

    def serialize(self, path):
        """Writes every cached definition (records and state) to `path`
        (atomically: a temporary file renamed over it)."""
        payload = {
            "max_fusions": self.max_fusions,
            "next_id": self._next_id,
            "fusions": [{"id": e.id, "records": [r.to_json() for r in e.records],
                         "state": e.state.to_json()} for e in self._entries.values()],
        }
        text = json.dumps(payload, separators=(",", ":"))
        document = {"format": FORMAT, "format_version": FORMAT_VERSION,
                    "hostir_version": __version__,
                    "sha256": hashlib.sha256(text.encode()).hexdigest()}
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        temporary = f"{path}.tmp.{os.getpid()}"
        with open(temporary, "w") as file:
            # Header line, then the payload exactly as checksummed.
            file.write(json.dumps(document) + "\n" + text + "\n")
        os.replace(temporary, path)

    @classmethod
    def deserialize(cls, path, max_fusions=None):
        """A cache read from `path`. A missing, truncated, corrupt or
        other-version file gives a warning and an empty cache."""
        try:
            return cls._read(path, max_fusions)
        except _CacheFileError as problem:
            warnings.warn(f"hostir: ignoring the fusion cache file {path}: {problem}; "
                          "starting with an empty cache", RuntimeWarning, stacklevel=2)
            return cls(max_fusions or 1024)

    @classmethod
    def _read(cls, path, max_fusions):
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError as error:
            raise _CacheFileError(f"cannot read it ({error.strerror or error})") from None
        try:
            header_line, _, text = data.decode("utf-8").partition("\n")
        except UnicodeDecodeError:
            raise _CacheFileError("it is not a hostir fusion cache (not UTF-8 text)") from None
        try:
            header = json.loads(header_line)
        except (ValueError, RecursionError):
            raise _CacheFileError("it is not a hostir fusion cache (bad header)") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise _CacheFileError("it is not a hostir fusion cache (bad header)")
        if header.get("format_version") != FORMAT_VERSION:
            raise _CacheFileError(f"it has format version {header.get('format_version')!r}, "
                                  f"this hostir reads version {FORMAT_VERSION}")
        if header.get("hostir_version") != __version__:
            raise _CacheFileError(f"it was written by hostir {header.get('hostir_version')!r}, "
                                  f"this is hostir {__version__}")
        text = text.rstrip("\n")
        if hashlib.sha256(text.encode()).hexdigest() != header.get("sha256"):
            raise _CacheFileError("its checksum does not match (truncated or corrupt)")
        try:
            payload = json.loads(text)
            cache = cls(max_fusions or payload["max_fusions"])
            seen = set()
            for item in payload["fusions"]:
                fusion_id = item["id"]
                if not isinstance(fusion_id, int) or fusion_id in seen:
                    raise ValueError(f"bad fusion id {fusion_id!r}")
                seen.add(fusion_id)
                records = [Record.from_json(r) for r in item["records"]]
                state = FusionState.from_json(item["state"])
                node = cache._walk(records, create=True)
                if node.entry is not None:
                    raise ValueError(f"two fusions with the same records ({fusion_id})")
                cache._insert(node, fusion_id, records, state, None)
            cache._next_id = max([int(payload["next_id"])] + [i + 1 for i in seen])
        except Exception as error:  # a hostile file must not raise (docs/python.md)
            # Whatever the content makes fail (a nesting too deep for json,
            # a record the C++ side rejects, a wrong type) means a bad file.
            raise _CacheFileError(f"its content is malformed ({type(error).__name__}: "
                                  f"{_first_line(error)})") from None
        return cache


class _CacheFileError(Exception):
    pass


def _first_line(error):
    text = str(error)
    return text.splitlines()[0][:200] if text else ""


def _rank():
    """This process's rank, for the name of its cache file. A value that is
    not a whole number is a hostir.Error naming the variable, as the C++
    launch environment reports it (not int()'s ValueError)."""
    for name in ("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"):
        value = os.environ.get(name)
        if value:
            if re.fullmatch(r"[0-9]+", value) is None:
                raise _C.Error(f"bad launch environment: {name}={value!r} is not a whole number; "
                               f"it must be this process's rank (0, 1, ...), which names its "
                               f"HOSTIR_CACHE_DIR file")
            return int(value)
    return 0


def default_cache_path():
    """$HOSTIR_CACHE_DIR/fusion_cache.rank<R>.json, or None when unset."""
    directory = os.environ.get("HOSTIR_CACHE_DIR")
    if not directory:
        return None
    return os.path.join(directory, f"fusion_cache.rank{_rank()}.json")


def _save_default(path):
    cache = FusionCache._default
    if cache is None:
        return
    try:
        cache.serialize(path)
    except OSError as error:
        warnings.warn(f"hostir: could not save the fusion cache to {path}: {error}",
                      RuntimeWarning)
