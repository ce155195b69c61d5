"""The disk space of nginx's log of micro-cache hits beside nginx (docs/insights.md "In
Kubernetes"): nobody rotates it there, so the reader frees what it has counted itself.

Freeing is punching a hole (`fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)`): the blocks
go back to the file system, but the file keeps its inode and its size, and every offset keeps
its meaning. So nginx appends on undisturbed (`O_APPEND`: at the end, whatever was freed), the
position stored with the counts stays true, and no line is lost or read twice, which a
truncation (racing nginx's next write) or a rename (nginx must be told to reopen) could not
promise. The file's size grows; the space it takes is what is not counted yet.

When the database is unreachable, nothing is counted and the log grows. Past `limit` unread
bytes the oldest are freed unread (`bound`), so the volume stays small whatever the outage lasts;
the reader later skips the hole (`proxy_log._past_holes`). Those answers are not counted.

Python has no binding for the punching mode of fallocate(2) (`os.posix_fallocate` only
allocates) and the one PyPI package wrapping it is unmaintained C: hence ctypes, Linux only.
"""

from __future__ import annotations

import ctypes
import errno
import os
from pathlib import Path

_KEEP_SIZE = 0x01  # FALLOC_FL_KEEP_SIZE (linux/falloc.h)
_PUNCH_HOLE = 0x02  # FALLOC_FL_PUNCH_HOLE
# the process's own symbols: the C library python is linked with (glibc or musl), no lookup
_libc = ctypes.CDLL(None, use_errno=True)
_fallocate = getattr(_libc, "fallocate64", None) or getattr(_libc, "fallocate", None)
if _fallocate is not None:
    _fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    _fallocate.restype = ctypes.c_int


def first_data(fd: int, position: int, size: int) -> int:
    """The first offset at or after `position` of the open file `fd` (`size` bytes) that holds
    data: a hole freed here is skipped without reading it; `size` when only a hole is left."""
    if position >= size:
        return position
    try:
        return os.lseek(fd, position, os.SEEK_DATA)
    except OSError as exc:
        # ENXIO: a hole up to the end; another error: no SEEK_DATA here, read on as usual
        return size if exc.errno == errno.ENXIO else position


def punch(fd: int, start: int, end: int) -> None:
    """Free the bytes [start, end) of the open file `fd`; they read as zeros from now on."""
    if end <= start:
        return
    if _fallocate is None:
        raise OSError(errno.EOPNOTSUPP, "fallocate(2) is not available here")
    if _fallocate(fd, _PUNCH_HOLE | _KEEP_SIZE, start, end - start) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def _block_start(fd: int, offset: int) -> int:
    """The start of the file system block `offset` is in. A hole frees only the blocks wholly
    inside it: punched from where the last one ended, the block that punch ended in (zeroed in
    part by each) would stay allocated, one block a round, for good. Bytes before `offset` are
    counted or freed already, so starting earlier frees nothing still to be read."""
    block = os.fstat(fd).st_blksize or 4096
    return offset - offset % block


class LogSpace:
    """What one reader knows of its log: which file (inode), and up to where its bytes are
    counted (stored with their position) or given up, so no longer needed."""

    def __init__(self, path: Path, limit: int) -> None:
        self.path = path
        self.limit = limit
        self._inode = 0
        self._done = 0  # bytes before this are counted or dropped
        self._freed = 0  # bytes before this are a hole already

    def _follow(self, fd: int, inode: int) -> None:
        """Another file than the last one seen (this process's first, a new pod's, a replaced
        one): what it holds before its first data is done with (freed by an earlier process)."""
        if inode == self._inode:
            return
        start = first_data(fd, 0, os.fstat(fd).st_size)
        self._inode, self._done, self._freed = inode, start, start

    def counted(self, inode: int, position: int) -> None:
        """The lines of file `inode` up to `position` are counted and their position stored:
        free their space. Another file at the path now is left alone."""
        fd = os.open(self.path, os.O_WRONLY)
        try:
            if os.fstat(fd).st_ino != inode:
                return
            self._follow(fd, inode)
            self._done = max(self._done, position)
            punch(fd, _block_start(fd, self._freed), self._done)
            self._freed = self._done
        finally:
            os.close(fd)

    def bound(self) -> int:
        """When more than `limit` bytes wait uncounted, free the oldest so that half the limit is
        left; returns how many bytes were given up (0 mostly)."""
        fd = os.open(self.path, os.O_WRONLY)
        try:
            stat = os.fstat(fd)
            self._follow(fd, stat.st_ino)
            if stat.st_size - self._done <= self.limit:
                return 0
            # the rest of a line cut here is skipped when read: it no longer parses
            cut = stat.st_size - self.limit // 2
            punch(fd, _block_start(fd, self._freed), cut)
            dropped = cut - self._done
            self._done = self._freed = cut
            return dropped
        finally:
            os.close(fd)
