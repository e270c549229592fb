"""Protocol Buffers' wire format, the little of it the .pftrace reader and
merge need: one message's fields decoded, and fields encoded.  Standard
library only."""


class Malformed(ValueError):
    """A message that is not valid wire format; the text says what."""


def fields(b):
    """(field, wire type, value) of one message: an int for varints and
    fixed widths, bytes for length-delimited fields."""
    return _walk(b, False)


def spans(b):
    """(field, wire type, value, start, end) of one message: b[start:end]
    is the field as written, key included, to copy it unchanged."""
    return _walk(b, True)


def _walk(b, with_spans):
    # The three varint loops (key, value, length) are written out, not
    # called: a helper function made decoding a packet 18% slower.
    i, n = 0, len(b)
    while i < n:
        start = i
        key = shift = 0
        while True:
            if i >= n:
                raise Malformed("a field cut short")
            c = b[i]
            i += 1
            key |= (c & 0x7F) << shift
            if c < 0x80:
                break
            shift += 7
        field, wt = key >> 3, key & 7
        if wt == 0:
            v = shift = 0
            while True:
                if i >= n:
                    raise Malformed("a varint cut short")
                c = b[i]
                i += 1
                v |= (c & 0x7F) << shift
                if c < 0x80:
                    break
                shift += 7
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        elif wt == 2:
            ln = shift = 0
            while True:
                if i >= n:
                    raise Malformed("a length cut short")
                c = b[i]
                i += 1
                ln |= (c & 0x7F) << shift
                if c < 0x80:
                    break
                shift += 7
            if i + ln > n:
                raise Malformed("a field longer than its message")
            v = b[i:i + ln]
            i += ln
        else:
            raise Malformed("wire type %d" % wt)
        if i > n:
            raise Malformed("a field cut short")
        yield (field, wt, v, start, i) if with_spans else (field, wt, v)


def _varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


# Lengths, keys and small values: every packet has several.
_SMALL = [_varint(v) for v in range(1 << 14)]


def varint(v):
    """v (an unsigned integer, or a negative int64 as protobuf writes it:
    ten bytes of two's complement) as a varint."""
    if 0 <= v < 1 << 14:
        return _SMALL[v]
    return _varint(v + (1 << 64) if v < 0 else v)


def field(f, wt, v):
    """One field: v an int for wire types 0, 1 and 5, bytes for 2."""
    key = varint(f << 3 | wt)
    if wt == 0:
        return key + varint(v)
    if wt == 1:
        return key + (v & ((1 << 64) - 1)).to_bytes(8, "little")
    if wt == 5:
        return key + (v & 0xFFFFFFFF).to_bytes(4, "little")
    if wt == 2:
        return key + varint(len(v)) + v
    raise Malformed("wire type %d" % wt)


def uint(f, v):
    return field(f, 0, v)


def message(f, body):
    return field(f, 2, body)


def string(f, s):
    return field(f, 2, s.encode("utf-8", "surrogatepass"))


def int64(v):
    """A varint field's value read back as the signed int64 it encodes."""
    return v - (1 << 64) if v >= 1 << 63 else v
