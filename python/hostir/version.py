"""hostir.version(): the package version as a value that compares with another
version or a version string ("0.1.0" < "0.10.0")."""

import functools
import re

from ._version import __version__


@functools.total_ordering
class Version:
    def __init__(self, text):
        self.text = str(text)
        self.parts = tuple(int(p) if p.isdigit() else p
                           for p in re.findall(r"\d+|[A-Za-z]+", self.text))

    @staticmethod
    def _of(other):
        return other if isinstance(other, Version) else Version(other)

    def __eq__(self, other):
        return self.parts == self._of(other).parts

    def __lt__(self, other):
        return [(isinstance(p, str), p) for p in self.parts] < \
            [(isinstance(p, str), p) for p in self._of(other).parts]

    def __hash__(self):
        return hash(self.parts)

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Version({self.text!r})"


def version():
    return Version(__version__)
