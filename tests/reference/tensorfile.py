#!/usr/bin/python3
"""Named-tensor files (RPTF), the Python side of engine/tensorfile.h.

Format, little endian throughout:

    "RPTF"  u32 version (1)  u32 count
    count records:
        u32 name_len, name bytes (UTF-8, no NUL),
        u32 dtype (0 = f32, 1 = i32, 2 = f64),
        u32 ndim, u32 dims[ndim],
        data: product(dims) elements, row-major (C order)

read(path)         -> OrderedDict name -> numpy array (in file order)
write(path, items) -> writes PATH.tmp.<pid> and renames it over PATH, like tf_write

The C reader accepts names shorter than 256 bytes and at most 4 dims, so write()
refuses anything outside those limits rather than produce a file C cannot read.

Only numpy and the standard library are needed (no torch).
"""
import collections
import os
import struct

import numpy as np

MAGIC = b"RPTF"
VERSION = 1

# dtype code <-> little-endian numpy dtype
_CODE_TO_DTYPE = {0: np.dtype("<f4"), 1: np.dtype("<i4"), 2: np.dtype("<f8")}
_KIND_TO_CODE = {(np.dtype(np.float32).kind, 4): 0,
                 (np.dtype(np.int32).kind, 4): 1,
                 (np.dtype(np.float64).kind, 8): 2}

MAX_NAME = 255  # engine/tensorfile.c reads names into char[256]
MAX_NDIM = 4    # tf_tensor.dims[4]


class FormatError(ValueError):
    """The file is not a valid RPTF version-1 tensor file."""


def _dtype_code(arr):
    code = _KIND_TO_CODE.get((arr.dtype.kind, arr.dtype.itemsize))
    if code is None:
        raise TypeError("tensorfile: unsupported dtype %s (use float32, int32 or float64)"
                        % arr.dtype)
    return code


def read(path):
    """Reads a whole file; returns an OrderedDict name -> numpy array (native byte order)."""
    with open(path, "rb") as fp:
        buf = fp.read()
    pos = 0

    def take(n, what):
        nonlocal pos
        if pos + n > len(buf):
            raise FormatError("%s: truncated %s at byte %d" % (path, what, pos))
        piece = buf[pos:pos + n]
        pos += n
        return piece

    def u32(what):
        return struct.unpack("<I", take(4, what))[0]

    if take(4, "magic") != MAGIC:
        raise FormatError("%s: not a tensor file (bad magic)" % path)
    version = u32("version")
    if version != VERSION:
        raise FormatError("%s: unsupported version %d" % (path, version))
    count = u32("count")
    out = collections.OrderedDict()
    for i in range(count):
        name_len = u32("record name length")
        name = take(name_len, "record name").decode("utf-8")
        code = u32("dtype")
        if code not in _CODE_TO_DTYPE:
            raise FormatError("%s: record %r has unknown dtype %d" % (path, name, code))
        ndim = u32("ndim")
        if ndim > MAX_NDIM:
            raise FormatError("%s: record %r has %d dims (max %d)" % (path, name, ndim, MAX_NDIM))
        dims = tuple(u32("dims") for _ in range(ndim))
        dt = _CODE_TO_DTYPE[code]
        n = 1
        for d in dims:
            n *= d
        raw = take(n * dt.itemsize, "data of %r" % name)
        arr = np.frombuffer(raw, dtype=dt).reshape(dims)
        # Native-endian, writable copy so callers may modify it freely.
        arr = arr.astype(dt.newbyteorder("="), copy=True)
        if name in out:
            raise FormatError("%s: duplicate record name %r" % (path, name))
        out[name] = arr
    if pos != len(buf):
        raise FormatError("%s: %d trailing bytes after %d records" % (path, len(buf) - pos, count))
    return out


def write(path, items):
    """Writes items (a mapping or an iterable of (name, array) pairs) in the given order.

    Arrays must already be float32, int32 or float64: no silent conversion, so a caller
    never writes an f64 where the reader expects an f32.  Atomic: the data go to
    PATH.tmp.<pid>, are fsynced and renamed over PATH.
    """
    if hasattr(items, "items"):
        items = items.items()
    records = []
    seen = set()
    for name, value in items:
        arr = np.asarray(value)
        code = _dtype_code(arr)
        bname = name.encode("utf-8")
        if not bname or len(bname) > MAX_NAME:
            raise ValueError("tensorfile: bad name length for %r" % name)
        if name in seen:
            raise ValueError("tensorfile: duplicate name %r" % name)
        seen.add(name)
        if arr.ndim > MAX_NDIM:
            raise ValueError("tensorfile: %r has %d dims (max %d)" % (name, arr.ndim, MAX_NDIM))
        le = np.ascontiguousarray(arr, dtype=_CODE_TO_DTYPE[code])
        header = struct.pack("<I", len(bname)) + bname + struct.pack("<II", code, arr.ndim)
        header += b"".join(struct.pack("<I", d) for d in arr.shape)
        records.append(header + le.tobytes(order="C"))

    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as fp:
            fp.write(MAGIC + struct.pack("<II", VERSION, len(records)))
            for r in records:
                fp.write(r)
            fp.flush()
            os.fsync(fp.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


if __name__ == "__main__":
    # `tensorfile.py FILE...` lists the records of each file.
    import sys
    for p in sys.argv[1:]:
        for k, v in read(p).items():
            print("%s\t%s\t%s\t%s" % (p, k, v.dtype, "x".join(map(str, v.shape)) or "scalar"))
