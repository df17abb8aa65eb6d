"""Exact identifier columns (query ids, document ids) and the kernels that compare them.

An :class:`Ids` column holds either UTF-8 byte strings, packed as ``data`` (uint8) and
``offsets`` (int64, ``n + 1``), or int64 ``values``. Identifiers are never hashed lossily:
hashes only speed up lookups, every hash match is confirmed byte for byte.

Ordering is trec_eval's ``strcmp`` order. Integer ids are ordered as their decimal strings
(``"10" < "9"``), without building those strings, so that a run given as integer arrays ranks
and reports exactly like the same run written to a file.
"""

import os
from collections import namedtuple

import numpy as np

from fastir import _jit
from fastir._jit import helper, jit, python_variant


def frozen(array, dtype):
    """``array`` as a read-only contiguous array of ``dtype`` (a view when it already is
    one: the caller's array is not touched). Containers keep their columns this way, so
    each kernel meets one array type and numba compiles one specialisation of it."""
    array = np.ascontiguousarray(array, dtype=dtype)
    if array.flags.writeable:
        array = array.view()
        array.flags.writeable = False
    return array


_EMPTY_U8 = frozen(np.zeros(0), np.uint8)
_EMPTY_I64 = frozen(np.zeros(0), np.int64)
_ZERO_OFFSETS = frozen(np.zeros(1), np.int64)


def listed(key):
    """An id given by the caller (a dict key) as an id column lists it: bytes as text."""
    return key.decode("utf-8", "surrogateescape") if isinstance(key, bytes) else key


#: An id column as kernels take it (:meth:`Ids.args`): UTF-8 bytes ``data`` with ``offsets``
#: (``n + 1``) when ``is_int`` is False, else int64 ``values``; the other arrays are empty.
IdColumn = namedtuple("IdColumn", "data offsets values is_int")


class Ids:
    """A column of exact identifiers: byte strings (``data``/``offsets``) or int64 ``values``.

    ``text`` marks integers that stand for canonical decimal text (``"0"``, ``"123"``, no
    sign, no leading zero: a file's MS MARCO-style doc ids). They are kept as integers
    (half the memory, cheap hashing) and given back as strings; since the mapping is
    one-to-one and integers order as their decimal strings, nothing else changes.
    """

    __slots__ = ("data", "offsets", "values", "is_int", "text")

    def __init__(self, data=None, offsets=None, values=None, text=False):
        self.is_int = values is not None
        self.text = text and self.is_int
        if self.is_int:
            self.data, self.offsets = _EMPTY_U8, _ZERO_OFFSETS
            self.values = frozen(values, np.int64)
        else:
            self.data = frozen(data, np.uint8)
            self.offsets = frozen(offsets, np.int64)
            self.values = _EMPTY_I64

    @classmethod
    def from_strings(cls, items):
        """Pack a sequence of ``str`` (encoded as UTF-8) or ``bytes``."""
        packed = ascii_column(items)
        if packed is not None:
            return packed
        encoded = [s.encode("utf-8", "surrogateescape") if isinstance(s, str) else bytes(s)
                   for s in items]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)),
                  out=offsets[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)

    @classmethod
    def from_array(cls, array):
        """Build from a numpy array: integer dtypes stay integers, anything else is text."""
        array = np.asarray(array)
        if array.ndim != 1:
            raise ValueError(f"ids must be 1-d, got shape {array.shape}")
        if array.dtype.kind in "iu":
            if array.dtype == np.uint64 and array.size and array.max() > np.iinfo(np.int64).max:
                raise ValueError("integer ids above 2**63 - 1 are not supported")
            return cls(values=array.astype(np.int64, copy=False))
        if array.dtype.kind == "S":
            return _pack_fixed_width(array.view(np.uint8).reshape(len(array), array.itemsize))
        if array.dtype.kind == "U":
            try:
                fixed = array.astype("S")  # fast path: ASCII text
            except UnicodeEncodeError:
                return cls.from_strings(array.tolist())
            return cls.from_array(fixed)
        if array.dtype.kind == "O":
            items = array.tolist()
            packed = ascii_column(items)  # (the common case, at once: a DataFrame's ids)
            if packed is not None:
                return packed
            if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in items):
                wide = [x for x in items if not -2**63 <= x < 2**63][:1]
                if wide:
                    raise ValueError(f"integer ids must fit in 64 bits, got {wide[0]}: give "
                                     "such ids as text")
                return cls(values=np.array(items, dtype=np.int64))
            bad = [x for x in items if not isinstance(x, (str, bytes))][:1]
            if bad:
                raise TypeError(f"ids must be all str/bytes or all integers, got {bad[0]!r} "
                                f"({type(bad[0]).__name__})")
            return cls.from_strings(items)
        raise TypeError(f"unsupported id dtype {array.dtype}")

    def __len__(self):
        return len(self.values) if self.is_int else len(self.offsets) - 1

    def __getitem__(self, i):
        if self.is_int:
            return str(self.values[i]) if self.text else int(self.values[i])
        return bytes(self.data[self.offsets[i]:self.offsets[i + 1]]).decode(
            "utf-8", "surrogateescape")

    def tolist(self):
        if self.is_int:
            values = self.values.tolist()
            return [str(v) for v in values] if self.text else values
        raw, offs = self.data.tobytes(), self.offsets.tolist()
        return [raw[a:b].decode("utf-8", "surrogateescape") for a, b in zip(offs, offs[1:])]

    def take(self, index):
        """The ids at positions ``index`` (an int64 array), as a new column."""
        index = np.asarray(index, dtype=np.int64)
        if self.is_int:
            return Ids(values=self.values[index], text=self.text)
        data, offsets = _jit.select(_gather_bytes, len(index))(self.data, self.offsets, index)
        return Ids(data, offsets)

    def as_text(self):
        """The same ids as byte strings (integers as their decimal strings)."""
        if not self.is_int:
            return self
        return Ids.from_strings([str(v) for v in self.values.tolist()])

    def as_canonical_ints(self):
        """The same ids as integers if every one is canonical decimal text, else None."""
        if self.is_int:
            return self
        values, ok = _jit.select(_canonical_ints, len(self))(self.data, self.offsets)
        return Ids(values=values, text=True) if ok else None

    def args(self):
        """The column as kernels take it (an :data:`IdColumn`)."""
        return IdColumn(self.data, self.offsets, self.values, self.is_int)

    def keys(self):
        """The ids as Python values that compare as the ids do: ``bytes`` for text, ``int``
        for integers (for dicts and sets: equal ids, equal keys)."""
        return _keys(self.args())


def ascii_column(items):
    """``items`` packed at once when every one is an ASCII ``str`` (a byte a character), else
    None."""
    try:
        text = "".join(items)
    except TypeError:  # (not all str)
        return None
    if not text.isascii():
        return None
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, items), dtype=np.int64, count=len(items)), out=offsets[1:])
    return Ids(np.frombuffer(text.encode("ascii"), dtype=np.uint8), offsets)


def common_kind(a, b):
    """Return ``a, b`` as two integer columns or two text columns (integers match text by
    their decimal strings). Text that is all canonical decimal becomes integers (cheap);
    otherwise the integers become text."""
    if a.is_int == b.is_int:
        return a, b
    as_ints = (b if a.is_int else a).as_canonical_ints()
    if as_ints is not None:
        return (a, as_ints) if a.is_int else (as_ints, b)
    return a.as_text(), b.as_text()


@helper
def canonical_int(data, start, end):
    """The value of canonical decimal text (``0`` or ``[1-9][0-9]{0,17}``), or -1."""
    n = end - start
    if n == 0 or n > 18 or (n > 1 and data[start] == 48):
        return -1
    value = 0
    for p in range(start, end):
        c = data[p]
        if c < 48 or c > 57:
            return -1
        value = value * 10 + np.int64(c - 48)
    return value


def canonical_text(token):
    """Whether ``token`` (bytes) is canonical decimal text, as :func:`canonical_int`."""
    return token.isdigit() and len(token) <= 18 and (token == b"0" or token[:1] != b"0")


@jit
def _canonical_ints(data, offsets):
    n = len(offsets) - 1
    values = np.empty(n, dtype=np.int64)
    for i in range(n):
        values[i] = canonical_int(data, offsets[i], offsets[i + 1])
        if values[i] < 0:
            return values, False
    return values, True


@python_variant(_canonical_ints)
def _canonical_ints(data, offsets):
    items = _text_keys(data, offsets)
    if all(map(canonical_text, items)):
        return np.array([int(t) for t in items], dtype=np.int64), True
    return np.zeros(len(items), dtype=np.int64), False


def _keys(column):
    """See :meth:`Ids.keys` (``column``: an :data:`IdColumn`)."""
    if column.is_int:
        return column.values.tolist()
    return _text_keys(column.data, column.offsets)


def _text_keys(data, offsets):
    raw, bounds = data.tobytes(), offsets.tolist()
    return [raw[a:b] for a, b in zip(bounds, bounds[1:])]


def order_keys(column):
    """Python values that order as the ids of ``column`` do (strcmp: integers as decimal
    text)."""
    if column.is_int:
        return [b"%d" % v for v in column.values.tolist()]
    return _text_keys(column.data, column.offsets)


def _pack_fixed_width(matrix):
    """Ids from the rows of a fixed-width byte matrix (numpy ``S`` strings: trailing NULs
    are padding)."""
    n, width = matrix.shape
    nonzero = matrix != 0
    lengths = np.where(nonzero.any(axis=1), width - np.argmax(nonzero[:, ::-1], axis=1), 0)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Ids(matrix[np.arange(width) < lengths[:, None]], offsets)


def rows_of(starts, lengths):
    """The rows ``starts[k]:starts[k] + lengths[k]`` of every segment ``k``, end to end
    (numpy, vectorised)."""
    total = int(lengths.sum())
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(total, dtype=np.int64) + shift


def gather_spans(data, starts, lengths):
    """The byte spans ``data[starts[k]:starts[k] + lengths[k]]`` packed end to end, and
    their offsets (numpy, vectorised)."""
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return data[rows_of(starts, lengths)], offsets


@jit
def _gather_bytes(data, offsets, index):
    new_offsets = np.zeros(len(index) + 1, dtype=np.int64)
    for k in range(len(index)):
        i = index[k]
        new_offsets[k + 1] = new_offsets[k] + offsets[i + 1] - offsets[i]
    new_data = np.empty(new_offsets[-1], dtype=np.uint8)
    for k in range(len(index)):
        i = index[k]
        start = new_offsets[k]
        for j in range(offsets[i + 1] - offsets[i]):
            new_data[start + j] = data[offsets[i] + j]
    return new_data, new_offsets


@python_variant(_gather_bytes)
def _gather_bytes(data, offsets, index):
    return gather_spans(data, offsets[index], offsets[index + 1] - offsets[index])


# ---------------------------------------------------------------------------------------
# Kernel helpers. Columns are passed as an :data:`IdColumn`; two columns compared or
# matched are of one kind (see :func:`common_kind`).

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)

#: This process's hash key. Hash tables of ids (the join's judgment lookups, interning) mix
#: it in, so that nobody can craft ids that all land in one probe chain (a quadratic join
#: on an untrusted submission) without knowing it. Random per process, and passed to the
#: kernels as an argument: a numba global would be frozen into the on-disk cache.
HASH_KEY = np.uint64(int.from_bytes(os.urandom(8), "little"))


@jit
def mix64(x, key):
    """splitmix64's finaliser of ``x ^ key``: a well-spread 64-bit hash of a 64-bit id."""
    x = x ^ key
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@helper
def bytes_hash(data, start, end, key):
    h = _FNV_OFFSET ^ key
    for p in range(start, end):
        h = (h ^ np.uint64(data[p])) * _FNV_PRIME
    return mix64(h, key)


@helper
def id_hash(column, i, key):
    """Id ``i``'s hash. An integer id's is a bijection of it (the xor with the key and
    splitmix64's xor-shifts and odd multipliers are each invertible): equal hashes, equal
    ids."""
    if column.is_int:
        return mix64(np.uint64(column.values[i]), key)
    return bytes_hash(column.data, column.offsets[i], column.offsets[i + 1], key)


@helper
def column_length(column):
    """The number of ids in ``column``."""
    return len(column.values) if column.is_int else len(column.offsets) - 1


@helper
def bytes_cmp(data_a, start_a, end_a, data_b, start_b, end_b):
    """strcmp of two byte ranges: -1, 0 or 1."""
    n_a = end_a - start_a
    n_b = end_b - start_b
    n = min(n_a, n_b)
    for k in range(n):
        x = data_a[start_a + k]
        y = data_b[start_b + k]
        if x != y:
            return -1 if x < y else 1
    if n_a == n_b:
        return 0
    return -1 if n_a < n_b else 1


@python_variant(bytes_cmp)
def bytes_cmp(data_a, start_a, end_a, data_b, start_b, end_b):
    a, b = data_a[start_a:end_a].tobytes(), data_b[start_b:end_b].tobytes()
    return (a > b) - (a < b)


@helper
def bytes_equal(data, start_a, end_a, start_b, end_b):
    """Equality of two byte ranges of one array."""
    n = end_a - start_a
    if end_b - start_b != n:
        return False
    for k in range(n):
        if data[start_a + k] != data[start_b + k]:
            return False
    return True


_POW10_U64 = np.array([10**k for k in range(20)], dtype=np.uint64)


@jit
def _n_digits(x):
    """Decimal digits of an unsigned integer (a scan of the powers of ten, no division)."""
    n = 1
    while n < 20 and x >= _POW10_U64[n]:
        n += 1
    return n


@jit
def _digits_cmp(x, y):
    """Compare the decimal strings of two unsigned integers, byte by byte."""
    if x == y:
        return 0
    n_x = _n_digits(x)
    n_y = _n_digits(y)
    if n_x == n_y:  # same length: numeric order is string order
        return -1 if x < y else 1
    if n_x > n_y:
        head = x // _POW10_U64[n_x - n_y]
        if head == y:
            return 1
        return -1 if head < y else 1
    head = y // _POW10_U64[n_y - n_x]
    if head == x:
        return -1
    return -1 if x < head else 1


@jit
def _abs_u64(v):
    if v >= 0:
        return np.uint64(v)
    return np.uint64(-(v + 1)) + np.uint64(1)


@jit
def int_str_cmp(a, b):
    """Compare two int64 by their decimal strings ('-' sorts before the digits)."""
    if a == b:
        return 0
    if a < 0 and b >= 0:
        return -1
    if b < 0 and a >= 0:
        return 1
    return _digits_cmp(_abs_u64(a), _abs_u64(b))


@python_variant(int_str_cmp)
def int_str_cmp(a, b):
    x, y = b"%d" % a, b"%d" % b
    return (x > y) - (x < y)


@helper
def id_cmp(a, i, b, j):
    """strcmp order of id ``i`` of column ``a`` against id ``j`` of column ``b``: -1, 0 or
    1."""
    if a.is_int:
        return int_str_cmp(a.values[i], b.values[j])
    return bytes_cmp(a.data, a.offsets[i], a.offsets[i + 1], b.data, b.offsets[j],
                     b.offsets[j + 1])


@helper
def id_equal(a, i, b, j):
    """Whether id ``i`` of column ``a`` is id ``j`` of column ``b``."""
    if a.is_int:
        return a.values[i] == b.values[j]
    start_a = a.offsets[i]
    start_b = b.offsets[j]
    n = a.offsets[i + 1] - start_a
    if b.offsets[j + 1] - start_b != n:
        return False
    for k in range(n):
        if a.data[start_a + k] != b.data[start_b + k]:
            return False
    return True


def intern_blocks(column):
    """Intern a column of ids that usually comes in blocks of equal ids (a run or qrels
    grouped by query). Returns ``(block_first, block_code, first)``: the first row and the
    code of every block of consecutive equal ids, and the first row of every code.

    Consecutive equal ids cost one comparison, a new block one hash probe; memory is
    proportional to the number of blocks, not of rows.
    """
    if column.is_int:
        return _jit.select(_intern_int_blocks, len(column.values))(column.values, HASH_KEY)
    return _jit.select(_intern_text_blocks, len(column.offsets) - 1)(column.data,
                                                                      column.offsets, HASH_KEY)


# The two kernels below index their arrays directly in the row loop: calling a helper that
# takes several arrays would reference-count them on every row (~100 ns a row).
@jit
def _intern_int_blocks(values, key):
    n = len(values)
    n_blocks = 0
    for i in range(n):
        if i == 0 or values[i] != values[i - 1]:
            n_blocks += 1
    block_first = np.empty(n_blocks, dtype=np.int64)
    block_code = np.empty(n_blocks, dtype=np.int64)
    first = np.empty(n_blocks, dtype=np.int64)
    size = 16
    while size < 2 * n_blocks:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, dtype=np.int64)
    b = 0
    n_codes = 0
    for i in range(n):
        if i > 0 and values[i] == values[i - 1]:
            continue
        slot = mix64(np.uint64(values[i]), key) & mask
        code = table[slot]
        while code >= 0 and values[first[code]] != values[i]:
            slot = (slot + np.uint64(1)) & mask
            code = table[slot]
        if code < 0:
            code = n_codes
            table[slot] = code
            first[code] = i
            n_codes += 1
        block_first[b] = i
        block_code[b] = code
        b += 1
    return block_first, block_code, first[:n_codes].copy()


@jit
def _intern_text_blocks(data, offsets, key):
    n = len(offsets) - 1
    n_blocks = 0
    for i in range(n):
        if i == 0 or not bytes_equal(data, offsets[i], offsets[i + 1], offsets[i - 1],
                                     offsets[i]):
            n_blocks += 1
    block_first = np.empty(n_blocks, dtype=np.int64)
    block_code = np.empty(n_blocks, dtype=np.int64)
    first = np.empty(n_blocks, dtype=np.int64)
    size = 16
    while size < 2 * n_blocks:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, dtype=np.int64)
    b = 0
    n_codes = 0
    for i in range(n):
        if i > 0 and bytes_equal(data, offsets[i], offsets[i + 1], offsets[i - 1], offsets[i]):
            continue
        slot = bytes_hash(data, offsets[i], offsets[i + 1], key) & mask
        code = table[slot]
        while code >= 0 and not bytes_equal(data, offsets[first[code]], offsets[first[code] + 1],
                                            offsets[i], offsets[i + 1]):
            slot = (slot + np.uint64(1)) & mask
            code = table[slot]
        if code < 0:
            code = n_codes
            table[slot] = code
            first[code] = i
            n_codes += 1
        block_first[b] = i
        block_code[b] = code
        b += 1
    return block_first, block_code, first[:n_codes].copy()


@python_variant(_intern_int_blocks)
def _intern_int_blocks(values, key):
    return _intern_keys(values.tolist())


@python_variant(_intern_text_blocks)
def _intern_text_blocks(data, offsets, key):
    return _intern_keys(_text_keys(data, offsets))


def _intern_keys(keys):
    """The Python variant of the two kernels above, on the ids' keys."""
    block_first, block_code, first, codes = [], [], [], {}
    previous = None
    for i, key in enumerate(keys):
        if i > 0 and key == previous:
            continue
        previous = key
        code = codes.setdefault(key, len(first))
        if code == len(first):
            first.append(i)
        block_first.append(i)
        block_code.append(code)
    return tuple(np.array(items, dtype=np.int64) for items in (block_first, block_code, first))


@jit
def merge_sorted_ids(a, b):
    """Walk two sorted id columns; return, for the union in order, the index in a and in b
    (-1 where absent)."""
    n_a = column_length(a)
    n_b = column_length(b)
    in_a = np.empty(n_a + n_b, dtype=np.int64)
    in_b = np.empty(n_a + n_b, dtype=np.int64)
    i = j = k = 0
    while i < n_a or j < n_b:
        if i == n_a:
            c = 1
        elif j == n_b:
            c = -1
        else:
            c = id_cmp(a, i, b, j)
        if c < 0:
            in_a[k], in_b[k] = i, -1
            i += 1
        elif c > 0:
            in_a[k], in_b[k] = -1, j
            j += 1
        else:
            in_a[k], in_b[k] = i, j
            i += 1
            j += 1
        k += 1
    return in_a[:k].copy(), in_b[:k].copy()
