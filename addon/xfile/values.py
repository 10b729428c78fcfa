"""The flattened value stream members consume from.

Consecutive numeric tokens (text runs, binary lists, single integers) form one stream; ``,``
and ``;`` between them are separators. A member takes exactly as many values as its template
says, so one binary list may feed several members and one member may span several lists.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .document import Ragged
from .scan.tokens import NUMBERS, PUNCT, STRING, TokenSource, describe

_EMPTY_F = np.zeros(0, dtype=np.float64)
_EMPTY_I = np.zeros(0, dtype=np.int64)


class ValueStream:
    """Pending numeric chunks of one object's body, pulled from the tokenizer on demand."""

    def __init__(self, tokens: TokenSource) -> None:
        self.tokens = tokens
        self.chunks: deque[np.ndarray] = deque()
        self.offsets: deque[int] = deque()  # token offset of each chunk (for error places)
        self.pos = 0  # read position in chunks[0]
        self.pending = 0  # unread values in all chunks

    # -- feeding ---------------------------------------------------------------------------
    def _pull(self) -> bool:
        """Append the next numeric token (skipping separators); False at anything else."""
        tokens = self.tokens
        while True:
            tok = tokens.next()
            kind = tok[0]
            if kind == NUMBERS:
                if len(tok[1]):
                    self.chunks.append(tok[1])
                    self.offsets.append(tok[2])
                    self.pending += len(tok[1])
                    return True
                continue
            if kind == PUNCT and (tok[1] == ";" or tok[1] == ","):
                continue
            tokens.push(tok)
            return False

    def _fill(self, n: int, what: str) -> None:
        if n > self.pending + self.tokens.remaining():
            raise self._error(
                f"{what}: {n} values wanted, the rest of the file cannot hold that many"
            )
        while self.pending < n:
            if not self._pull():
                tok = self.tokens.next()
                self.tokens.push(tok)
                raise self.tokens.error(
                    f"{what}: expected {n - self.pending} more value(s), found {describe(tok)}",
                    tok[2],
                )

    def _gather(self, n: int) -> bool:
        """Pull numeric tokens until ``n`` values are pending; False when the values end first."""
        if n > self.pending + self.tokens.remaining():
            return False
        while self.pending < n:
            if not self._pull():
                return False
        return True

    def _peek(self, n: int) -> np.ndarray:
        """The next ``n`` pending values as one array, not consumed (a view within one chunk)."""
        head = self.chunks[0]
        if len(head) - self.pos >= n:
            return head[self.pos : self.pos + n]
        pieces = []
        start, need = self.pos, n
        for chunk in self.chunks:
            piece = chunk[start : start + need]
            pieces.append(piece)
            need -= len(piece)
            start = 0
            if not need:
                break
        return np.concatenate(pieces)

    def _every(self, n: int, step: int, value: float, first: int = 0) -> bool:
        """Whether the pending values ``first``, ``first + step``... below ``n`` all equal
        ``value`` (record sizes): checked chunk by chunk, without joining them."""
        at, start = 0, self.pos
        for chunk in self.chunks:
            piece = chunk[start : start + n - at]
            if not bool((piece[(first - at) % step :: step] == value).all()):
                return False
            at += len(piece)
            start = 0
            if at == n:
                return True
        return False

    def check_possible(self, count: int, what: str) -> None:
        """Refuse a count that the rest of the input could not hold, before looping on it."""
        if count > self.pending + self.tokens.remaining():
            raise self._error(f"{what}: count {count} is larger than the rest of the file")

    def _here(self) -> int:
        if self.chunks:
            return self.tokens.value_offset(self.offsets[0], self.pos)
        tok = self.tokens.next()
        self.tokens.push(tok)
        return tok[2]

    def _error(self, message: str) -> Exception:
        return self.tokens.error(message, self._here())

    # -- taking ----------------------------------------------------------------------------
    def _take_pieces(self, n: int) -> list[tuple[np.ndarray, int, int]]:
        """Consume n values as (array piece, chunk offset, index of piece in its chunk)."""
        pieces = []
        chunks, offsets = self.chunks, self.offsets
        need = n
        while need:
            head = chunks[0]
            start = self.pos
            k = min(len(head) - start, need)
            pieces.append((head[start : start + k], offsets[0], start))
            need -= k
            self.pos = start + k
            if self.pos == len(head):
                chunks.popleft()
                offsets.popleft()
                self.pos = 0
        self.pending -= n
        return pieces

    def _as_int(self, piece: np.ndarray, chunk_offset: int, first: int, what: str) -> np.ndarray:
        if piece.dtype.kind == "f":
            with np.errstate(invalid="ignore"):
                ints = piece.astype(np.int64)
            bad = ints != piece
            if bad.any():
                i = int(np.argmax(bad))
                raise self.tokens.error(
                    f"{what}: expected an integer, found {float(piece[i])!r}",
                    self.tokens.value_offset(chunk_offset, first + i),
                )
            return ints
        return piece.astype(np.int64)

    def take_ints(self, n: int, what: str) -> np.ndarray:
        if n <= 0:
            return _EMPTY_I
        self._fill(n, what)
        pieces = self._take_pieces(n)
        if len(pieces) == 1:
            return self._as_int(*pieces[0], what)
        return np.concatenate([self._as_int(*p, what) for p in pieces])

    def take_floats(self, n: int, what: str) -> np.ndarray:
        if n <= 0:
            return _EMPTY_F
        self._fill(n, what)
        pieces = self._take_pieces(n)
        if len(pieces) == 1:
            piece = pieces[0][0]
            if piece.dtype == np.float64:
                return piece.copy()  # owned and writable, not a view of the file
            with np.errstate(invalid="ignore"):  # signalling NaNs in binary floats stay NaN
                return piece.astype(np.float64)
        with np.errstate(invalid="ignore"):
            return np.concatenate([p[0] for p in pieces]).astype(np.float64, copy=False)

    def take_int(self, what: str) -> int:
        if self.pending == 0:
            self._fill(1, what)
        head = self.chunks[0]
        value = head[self.pos]
        if head.dtype.kind == "f" and not float(value).is_integer():
            raise self._error(f"{what}: expected an integer, found {float(value)!r}")
        self.pos += 1
        self.pending -= 1
        if self.pos == len(head):
            self.chunks.popleft()
            self.offsets.popleft()
            self.pos = 0
        return int(value)

    def take_float(self, what: str) -> float:
        return float(self.take_floats(1, what)[0])

    def take_string(self, what: str) -> str:
        if self.pending:
            raise self._error(f"{what}: expected a string, found a number")
        tokens = self.tokens
        while True:
            tok = tokens.next()
            if tok[0] == STRING:
                return str(tok[1])
            if tok[0] == PUNCT and (tok[1] == ";" or tok[1] == ","):
                continue
            tokens.push(tok)
            raise tokens.error(f"{what}: expected a string, found {describe(tok)}", tok[2])

    def take_ragged(self, count: int, integer: bool, what: str) -> Ragged:
        """``count`` records ``[k, v1..vk]`` (MeshFace): vectorised when all k are equal."""
        flat_empty = _EMPTY_I if integer else _EMPTY_F
        if count <= 0:
            return Ragged(flat_empty, _EMPTY_I)
        self.check_possible(count, what)
        self._fill(1, what)
        k = self.chunks[0][self.pos]
        if k >= 1 and float(k).is_integer():
            size = int(k) + 1
            need = count * size
            if self._gather(need) and self._every(need, size, k):
                flat = self.take_ints(need, what) if integer else self.take_floats(need, what)
                return Ragged(flat, np.arange(0, need, size, dtype=np.int64))
        return self._take_ragged_walk(count, integer, what)

    def _take_ragged_walk(self, count: int, integer: bool, what: str) -> Ragged:
        """Records of mixed sizes: walk a list copy of each chunk, whole records at a time."""
        flats: list[np.ndarray] = []
        starts: list[int] = []
        total = 0
        done = 0
        while done < count:
            self._fill(1, what)
            head = self.chunks[0]
            lst = head[self.pos :].tolist()
            i = 0
            n = len(lst)
            while done < count and i < n:
                k = lst[i]
                if k < 0 or k != int(k):
                    raise self._error_at(i, f"{what}: bad record size {k!r}")
                k = int(k)
                if i + 1 + k > n:
                    break
                starts.append(total + i)
                i += 1 + k
                done += 1
            if i:
                offset, first = self.offsets[0], self.pos
                piece = head[self.pos : self.pos + i]
                self._take_pieces(i)
                flats.append(self._as_int(piece, offset, first, what) if integer else piece)
                total += i
            if done < count:  # one record spans chunks: take it value by value
                k = self.take_int(what)
                if k < 0:
                    raise self._error(f"{what}: bad record size {k}")
                body = self.take_ints(k, what) if integer else self.take_floats(k, what)
                starts.append(total)
                flats.append(np.concatenate([np.array([k], dtype=body.dtype), body]))
                total += 1 + k
                done += 1
        flat = np.concatenate(flats) if flats else _EMPTY_I
        flat = flat.astype(np.int64 if integer else np.float64, copy=False)
        return Ragged(flat, np.asarray(starts, dtype=np.int64))

    def take_records(
        self, count: int, form: tuple[tuple[bool, ...], bool], what: str
    ) -> np.ndarray | Ragged:
        """``count`` records ``prefix..., k, v1..vk`` (TimedFloatKeys: time, nValues, values).

        One 2-D array (a row per record, leaves in declaration order) when every k is the same,
        else a :class:`Ragged`; integer-typed leaves must hold integers. When one numeric chunk
        holds every record (text files) this is a few numpy operations for 300k keys.
        """
        prefix_ints, values_int = form
        p = len(prefix_ints)
        self.check_possible(count, what)
        self._fill(p + 1, what)
        head = self.chunks[0][self.pos :]
        k = self._peek(p + 1)[p]
        if k >= 0 and float(k).is_integer():
            size = p + 1 + int(k)
            need = count * size
            if self._gather(need) and self._every(need, size, k, p):
                int_columns = np.array([*prefix_ints, True] + [values_int] * int(k))
                block = self._peek(need).reshape(count, size)
                if head.dtype.kind == "f" and int_columns.any():
                    ints = block[:, int_columns]
                    bad = ~(np.abs(ints) < 2.0**63) | (ints != np.trunc(ints))
                    if bad.any():
                        row, col = divmod(int(np.argmax(bad)), ints.shape[1])
                        column = int(np.flatnonzero(int_columns)[col])
                        value = float(ints[row, col])
                        raise self._error_at(
                            row * size + column, f"{what}: expected an integer, found {value!r}"
                        )
                all_int = bool(int_columns.all())
                with np.errstate(invalid="ignore"):  # signalling NaNs stay NaN
                    table = block.astype(np.int64 if all_int else np.float64)
                self._take_pieces(need)
                return table
            bulk = self._binary_records(count, prefix_ints, values_int, head, int(k))
            if bulk is not None:
                return bulk
        return self._take_records_walk(count, prefix_ints, values_int, what)

    def _binary_records(
        self,
        count: int,
        prefix_ints: tuple[bool, ...],
        values_int: bool,
        head: np.ndarray,
        k: int,
    ) -> np.ndarray | None:
        """Binary keys, one INTEGER_LIST and one FLOAT_LIST each, in one pass
        (``BinaryTokens.fixed_records``); None when they are laid out otherwise."""
        p = len(prefix_ints)
        if values_int or not all(prefix_ints) or len(self.chunks) != 1 or len(head) != p + 1:
            return None
        if head.dtype.kind != "u":  # the first record's integers come from an INTEGER_LIST
            return None
        bulk = self.tokens.fixed_records(count, p, k)
        if bulk is None:
            return None
        ints, first, later = bulk
        table = np.empty((count, p + 1 + k), dtype=np.float64)
        table[0, : p + 1] = head
        table[1:, : p + 1] = ints
        with np.errstate(invalid="ignore"):  # signalling NaNs stay NaN
            table[0, p + 1 :] = first
            table[1:, p + 1 :] = later
        self._take_pieces(p + 1)
        return table

    def _take_records_walk(
        self, count: int, prefix_ints: tuple[bool, ...], values_int: bool, what: str
    ) -> np.ndarray | Ragged:
        """Records spread over several chunks (binary lists) or of mixed sizes: one by one."""
        rows: list[np.ndarray] = []
        take_value = self.take_ints if values_int else self.take_floats
        all_int = all(prefix_ints) and values_int
        dtype = np.int64 if all_int else np.float64
        for _ in range(count):
            head = [self.take_int(what) if is_int else self.take_float(what)
                    for is_int in prefix_ints]  # fmt: skip
            k = self.take_int(what)
            if k < 0:
                raise self._error(f"{what}: bad record size {k}")
            values = take_value(k, what)  # checks k against the rest of the file first
            row = np.empty(len(head) + 1 + k, dtype=dtype)
            row[: len(head)] = head
            row[len(head)] = k
            row[len(head) + 1 :] = values
            rows.append(row)
        sizes = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        if len(rows) and (sizes == sizes[0]).all():
            return np.stack(rows)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        return Ragged(np.concatenate(rows), starts)

    def _error_at(self, index: int, message: str) -> Exception:
        return self.tokens.error(
            message, self.tokens.value_offset(self.offsets[0], self.pos + index)
        )

    def drain(self) -> int:
        """Drop values left after the members were read, the rest of their numeric run
        included; returns how many (for a warning)."""
        left = self.pending + self.tokens.drop_run_parts()
        self.chunks.clear()
        self.offsets.clear()
        self.pos = 0
        self.pending = 0
        return left
