"""The opcodes of a snapshot pickle checked before the unpickler runs them.

Python's unpickler (`_pickle`, in C) trusts the file in three ways a refusing
`find_class` cannot stop: a memo index sizes its memo (`LONG_BINPUT` 2**27 in a 24-byte
file allocates 2 GB of it), a dict or set is filled in whatever order the file says (keys
whose hashes all collide make each insert walk every key before it: quadratic), and the
work between two reads of the file cannot be interrupted. So the bytes reach the
unpickler only through `GuardedStream`, which walks every opcode (`OpcodeGuard`) before
handing the bytes on, keeping a shadow of the unpickler's stack, marks and memo where
each value is only "fit to be a dict key" or not. It refuses, before the unpickler sees
them:
- a memo index beyond the opcodes read so far (an honest pickler numbers its memo
  entries in order, one per value at most): damage;
- a dict key that is an int of 2**61-1 or more in size (an int's hash is its value mod
  2**61-1: such keys can all collide), a tuple of numbers only (its hash mixes theirs in
  a known way) or a container; strings' hashes are salted, small ints' and floats'
  collide only by few, and torch names every key of a snapshot;
- every opcode that reaches code (globals, REDUCE, BUILD, classes, extension codes,
  persistent ids) or builds a set, a frozenset, a bytearray or an out-of-band buffer;
- an unknown opcode, a stack or mark underflow, a memo get of nothing: damage.
And it stops a read that runs past its deadline (a check at each chunk of the file).
"""

from __future__ import annotations

import time

HASH_MODULUS = (1 << 61) - 1  # an int's hash is its value modulo this
CHUNK = 1 << 20  # bytes read from the file and checked at a time
_MAX_LINE_INT = 40  # digits of a text INT/LONG worth converting to check its size

ERROR_KINDS = (
    "unreadable",  # the file could not be opened or read
    "too_large",  # over KINETOSCOPE_MAX_SNAPSHOT_MB, or out of memory
    "not_pickle",  # not a pickle of protocol 2-5
    "refused",  # holds code, a non-plain value, or keys that can collide
    "damaged",  # truncated, inconsistent opcodes, nested too deeply
    "not_snapshot",  # plain data, but not what torch's _dump_snapshot writes
    "too_much_work",  # describes more than its size can honestly hold (shared references)
    "timeout",  # ran past KINETOSCOPE_SNAPSHOT_TIMEOUT_S
)


class SnapshotError(Exception):
    """A snapshot file that cannot be read or summarised; the message says why and
    `kind` (one of ERROR_KINDS) says which way."""

    def __init__(self, message: str, kind: str = "damaged") -> None:
        super().__init__(message)
        self.kind = kind


# Opcodes that push one value fit to be a dict key and take a fixed-size argument.
_KEY_FIXED = {
    ord("K"): 1,  # BININT1
    ord("M"): 2,  # BININT2
    ord("J"): 4,  # BININT
    ord("G"): 8,  # BINFLOAT
    ord("N"): 0,  # NONE
    0x88: 0,  # NEWTRUE
    0x89: 0,  # NEWFALSE
}
# Opcodes that push a string or bytes: (width of the length field, signed).
_SIZED = {
    0x8C: 1,  # SHORT_BINUNICODE
    ord("X"): 4,  # BINUNICODE
    0x8D: 8,  # BINUNICODE8
    ord("C"): 1,  # SHORT_BINBYTES
    ord("B"): 4,  # BINBYTES
    0x8E: 8,  # BINBYTES8
    ord("U"): 1,  # SHORT_BINSTRING
    ord("T"): 4,  # BINSTRING
}
_EMPTY = {ord("}"), ord("]")}  # EMPTY_DICT, EMPTY_LIST
_TEXT_VALUES = {ord("F"), ord("S"), ord("V")}  # FLOAT, STRING, UNICODE (a line each)
_REFUSED = {
    ord("c"): "names a global (GLOBAL)",
    0x93: "names a global (STACK_GLOBAL)",
    ord("R"): "calls something (REDUCE)",
    ord("b"): "sets an object's state (BUILD)",
    ord("i"): "builds a class instance (INST)",
    ord("o"): "builds a class instance (OBJ)",
    0x81: "builds a class instance (NEWOBJ)",
    0x92: "builds a class instance (NEWOBJ_EX)",
    0x82: "names an extension code (EXT1)",
    0x83: "names an extension code (EXT2)",
    0x84: "names an extension code (EXT4)",
    ord("P"): "holds a persistent id (PERSID)",
    ord("Q"): "holds a persistent id (BINPERSID)",
    0x8F: "builds a set (EMPTY_SET)",
    0x90: "builds a set (ADDITEMS)",
    0x91: "builds a frozenset (FROZENSET)",
    0x96: "builds a bytearray (BYTEARRAY8)",
}
_OUT_OF_BAND = {0x97: "NEXT_BUFFER", 0x98: "READONLY_BUFFER"}  # buffers a file cannot hold
# What each value on the shadow stack is as a dict key:
_TEXT = 0  # a str or bytes (its hash is salted: no file can make such keys collide)
_BAD_KEY = 1  # a big int, a tuple of numbers only, a container: refused as a key
_NUMBER = 2  # an int under 2**61-1, a float, None, a bool, (): hashes collide only by few


class _Incomplete(Exception):  # the opcode's argument is not all read yet
    pass


def _damaged(why: str) -> SnapshotError:
    return SnapshotError(f"damaged or truncated pickle: {why}", "damaged")


class OpcodeGuard:
    """Walks the opcodes of a pickle fed to it in pieces, in file order."""

    def __init__(self, deadline: float | None = None, size: int | None = None) -> None:
        self.deadline = deadline
        self.size = size  # the file's: no length in it can be longer
        self.walked = 0  # bytes of whole opcodes walked (at least one per opcode)
        self.done = False  # STOP seen: the unpickler reads nothing after it
        self._tail = b""  # the start of an opcode whose argument is not all fed yet
        self._stack: list[int] = []
        self._marks: list[int] = []
        self._memo: dict[int, int] = {}

    def feed(self, data: bytes) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise SnapshotError("reading it ran past its time limit", "timeout")
        if self.done or not data:
            return
        buf = self._tail + data if self._tail else data
        try:
            pos = self._walk(buf)
        except (KeyError, IndexError):
            raise _damaged("a memo get of nothing, or a stack or mark underflow") from None
        self.walked += pos
        self._tail = buf[pos:]

    def _walk(self, buf: bytes) -> int:
        """Walks every whole opcode of `buf`; where the first incomplete one starts (the
        frequent opcodes of torch's files here, in order of frequency; others: `_other`)."""
        pos, n = 0, len(buf)
        stack, memo, marks = self._stack, self._memo, self._marks
        push, from_bytes = stack.append, int.from_bytes
        while pos < n:
            op = buf[pos]
            if op == 0x68:  # BINGET (KeyError: nothing there)
                if pos + 2 > n:
                    break
                push(memo[buf[pos + 1]])
                pos += 2
            elif op == 0x8A:  # LONG1 (a CUDA address or an epoch time: 6-8 bytes)
                if pos + 2 > n or pos + 2 + buf[pos + 1] > n:
                    break
                if buf[pos + 1] <= 7:
                    push(_NUMBER)
                    pos += 2 + buf[pos + 1]
                else:
                    pos = self._long(op, buf, pos, n)
            elif op == 0x6A:  # LONG_BINGET
                if pos + 5 > n:
                    break
                push(memo[from_bytes(buf[pos + 1 : pos + 5], "little")])
                pos += 5
            elif op == 0x94:  # MEMOIZE: at the memo's count, as _pickle does
                memo[len(memo)] = stack[-1]
                pos += 1
            elif op == 0x28:  # MARK
                marks.append(len(stack))
                pos += 1
            elif op == 0x75:  # SETITEMS
                at = marks.pop()
                if _BAD_KEY in stack[at::2]:
                    raise _bad_keys()
                del stack[at:]
                if at < 1 or (marks and at <= marks[-1]):
                    raise IndexError
                pos += 1
            elif op == 0x7D or op == 0x5D:  # EMPTY_DICT, EMPTY_LIST
                push(_BAD_KEY)
                pos += 1
            elif op in _KEY_FIXED:  # the other numbers, None, True, False
                width = _KEY_FIXED[op]
                if pos + 1 + width > n:
                    break
                push(_NUMBER)
                pos += 1 + width
            else:
                try:
                    pos = self._other(op, buf, pos, n)
                except _Incomplete:
                    break
                if self.done:
                    break
        return pos

    def _other(self, op: int, buf: bytes, pos: int, n: int) -> int:
        """The less frequent opcodes; the position after this one."""
        if op == 0x28:  # MARK
            self._marks.append(len(self._stack))
            return pos + 1
        if op in _SIZED:
            return self._sized(op, buf, pos, n)
        if op in _EMPTY:
            self._stack.append(_BAD_KEY)
            return pos + 1
        if op == ord(")"):  # EMPTY_TUPLE
            self._stack.append(_NUMBER)
            return pos + 1
        if op in (0x8A, 0x8B):  # LONG1, LONG4
            return self._long(op, buf, pos, n)
        if op in _REFUSED:
            raise SnapshotError(
                f"refused: the pickle {_REFUSED[op]}; only plain data is read, "
                "nothing in the file is run",
                "refused",
            )
        if op in _OUT_OF_BAND:
            raise _damaged(f"an out-of-band buffer ({_OUT_OF_BAND[op]}) without its buffers")
        if op in (0x71, 0x72):  # BINPUT, LONG_BINPUT
            width = 1 if op == 0x71 else 4
            if pos + 1 + width > n:
                raise _Incomplete
            self._put(int.from_bytes(buf[pos + 1 : pos + 1 + width], "little"), pos)
            return pos + 1 + width
        if op in (0x80, 0x95):  # PROTO, FRAME: the frame's opcodes follow as any others
            width = 1 if op == 0x80 else 8
            if pos + 1 + width > n:
                raise _Incomplete
            if op == 0x95:
                self._length(int.from_bytes(buf[pos + 1 : pos + 9], "little"))
            return pos + 1 + width
        if op in _LINE_OPS:
            end = buf.find(b"\n", pos + 1)
            if end < 0:
                raise _Incomplete
            self._line(op, buf[pos + 1 : end], pos)
            return end + 1
        self._container(op)
        return pos + 1

    def _sized(self, op: int, buf: bytes, pos: int, n: int) -> int:
        width = _SIZED[op]
        if pos + 1 + width > n:
            raise _Incomplete
        size = int.from_bytes(buf[pos + 1 : pos + 1 + width], "little", signed=op == ord("T"))
        self._length(size)
        end = pos + 1 + width + size
        if end > n:
            raise _Incomplete
        self._stack.append(_TEXT)
        return end

    def _long(self, op: int, buf: bytes, pos: int, n: int) -> int:
        width = 1 if op == 0x8A else 4
        if pos + 1 + width > n:
            raise _Incomplete
        size = int.from_bytes(buf[pos + 1 : pos + 1 + width], "little", signed=width == 4)
        self._length(size)
        start = pos + 1 + width
        if start + size > n:
            raise _Incomplete
        if size <= 7:
            self._stack.append(_NUMBER)
        elif size > 16:
            self._stack.append(_BAD_KEY)
        else:
            value = int.from_bytes(buf[start : start + size], "little", signed=True)
            self._stack.append(_NUMBER if abs(value) < HASH_MODULUS else _BAD_KEY)
        return start + size

    def _length(self, size: int) -> None:
        """A string's, an int's or a frame's length: the unpickler allocates it before it
        reads (2**62 bytes asked of a 2 KB file); none is negative or over the file."""
        if size < 0 or (self.size is not None and size > self.size):
            raise _damaged(f"a length of {size} bytes in a file of {self.size}")

    def _line(self, op: int, text: bytes, pos: int) -> None:
        if op in (ord("g"), ord("p")):  # GET, PUT
            try:
                index = int(text)
            except ValueError:
                raise _damaged("a memo index that is not a number") from None
            if op == ord("g"):
                self._stack.append(self._memo[index])  # KeyError: damaged (`feed`)
            else:
                self._put(index, pos)
        elif op == ord("F"):
            self._stack.append(_NUMBER)
        elif op in _TEXT_VALUES:
            self._stack.append(_TEXT)
        else:  # INT, LONG
            self._stack.append(_text_int_key(text.rstrip(b"L")))

    def _put(self, index: int, pos: int) -> None:
        """A memo entry at `index`: no more than the bytes walked so far (an honest file
        numbers its entries in order, and each takes an opcode of a byte at least)."""
        if index < 0 or index > self.walked + pos:
            raise _damaged(f"memo index {index} after {self.walked + pos} bytes of opcodes")
        if not self._stack:
            raise _damaged("PUT with an empty stack")
        self._memo[index] = self._stack[-1]

    def _pop_mark(self) -> list[int]:
        if not self._marks:
            raise _damaged("no MARK to pop to")
        at = self._marks.pop()
        items = self._stack[at:]
        del self._stack[at:]
        return items

    def _pop(self, count: int) -> list[int]:
        if len(self._stack) < count or (self._marks and len(self._stack) - count < self._marks[-1]):
            raise _damaged("stack underflow")
        items = self._stack[len(self._stack) - count :]
        del self._stack[len(self._stack) - count :]
        return items

    def _container(self, op: int) -> None:
        """The opcodes without an argument that build or fill a container."""
        stack = self._stack
        if op == ord("u"):  # SETITEMS
            _check_keys(self._pop_mark()[::2])
            self._need(1)
        elif op == ord("s"):  # SETITEM
            _check_keys(self._pop(2)[:1])
            self._need(1)
        elif op == ord("e"):  # APPENDS
            self._pop_mark()
            self._need(1)
        elif op == ord("a"):  # APPEND
            self._pop(1)
            self._need(1)
        elif op == ord("d"):  # DICT
            _check_keys(self._pop_mark()[::2])
            stack.append(_BAD_KEY)
        elif op == ord("l"):  # LIST
            self._pop_mark()
            stack.append(_BAD_KEY)
        elif op == ord("t"):  # TUPLE
            stack.append(_tuple_key(self._pop_mark()))
        elif op in (0x85, 0x86, 0x87):  # TUPLE1-3
            stack.append(_tuple_key(self._pop(op - 0x84)))
        else:
            self._stack_op(op)

    def _stack_op(self, op: int) -> None:
        stack = self._stack
        if op == ord("0"):  # POP: a mark at the top is popped instead, as _pickle does
            if self._marks and self._marks[-1] == len(stack):
                self._marks.pop()
            else:
                self._pop(1)
        elif op == ord("1"):  # POP_MARK
            self._pop_mark()
        elif op == ord("2"):  # DUP
            self._need(1)
            stack.append(stack[-1])
        elif op == ord("."):  # STOP
            self.done = True
        else:
            raise _damaged(f"unknown opcode {op:#04x}")

    def _need(self, count: int) -> None:
        if len(self._stack) < count + (self._marks[-1] if self._marks else 0):
            raise _damaged("stack underflow")


_LINE_OPS = {ord("g"), ord("p"), ord("I"), ord("L")} | _TEXT_VALUES


def _check_keys(keys: list[int]) -> None:
    if _BAD_KEY in keys:
        raise _bad_keys()


def _bad_keys() -> SnapshotError:
    return SnapshotError(
        "refused: a dict keyed by a tuple of numbers, a container or an int of 2**61 or "
        "more (keys that can be made to collide; torch keys every dict by name)",
        "refused",
    )


def _tuple_key(items: list[int]) -> int:
    """A tuple's hash mixes its items' in a known way: numbers alone can be chosen to
    collide; one salted string among them makes the whole hash unknowable."""
    if _BAD_KEY in items:
        return _BAD_KEY
    if not items:
        return _NUMBER
    return _TEXT if _TEXT in items else _BAD_KEY


def _text_int_key(text: bytes) -> int:
    if len(text) > _MAX_LINE_INT:
        return _BAD_KEY
    try:
        value = int(text)
    except ValueError:
        return _NUMBER  # the unpickler refuses it
    return _NUMBER if abs(value) < HASH_MODULUS else _BAD_KEY
