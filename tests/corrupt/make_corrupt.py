#!/usr/bin/env python3
"""Writes the catalogue of deliberately corrupt safetensors files, one per failure class, and
EXPECTED (file -> the lattn_status the reader must return). Run from this folder:
    /usr/bin/python3 make_corrupt.py"""
import json, struct

def st(header, data=b"", raw_header=None, hl=None):
    h = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h) if hl is None else hl) + h + data

f32 = lambda *v: struct.pack("<%df" % len(v), *v)
ok_t = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
cases = {
    # name: (bytes, expected status)
    "valid_minimal":      (st({"x": ok_t}, f32(1, 2)), "LATTN_OK"),
    "valid_zero_sized":   (st({"e": {"dtype": "F32", "shape": [0, 3], "data_offsets": [0, 0]}, "x": ok_t}, f32(1, 2)), "LATTN_OK"),
    "valid_mixed":        (st({"__metadata__": {"source": "lattn", "note": "\u00e9"},
                               "h": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]},
                               "b": {"dtype": "BF16", "shape": [1, 2], "data_offsets": [4, 8]},
                               "i": {"dtype": "I64", "shape": [], "data_offsets": [8, 16]},
                               "d": {"dtype": "F64", "shape": [1], "data_offsets": [16, 24]}},
                              struct.pack("<2H2Hqd", 0x3C00, 0xC000, 0x3F80, 0xC0A0, -3, 0.5)), "LATTN_OK"),
    "short_file":         (b"\x08\x00\x00", "LATTN_E_FORMAT"),
    "header_too_long":    (struct.pack("<Q", 1 << 40) + b"{}", "LATTN_E_FORMAT"),
    "header_past_end":    (st({"x": ok_t}, f32(1, 2), hl=4096), "LATTN_E_FORMAT"),
    "not_an_object":      (st(None, raw_header=b"[1,2]"), "LATTN_E_FORMAT"),
    "bad_utf8":           (st(None, raw_header=b'{"\xff":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}'), "LATTN_E_FORMAT"),
    "overlong_utf8":      (st(None, raw_header=b'{"\xc0\xaf":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}'), "LATTN_E_FORMAT"),
    "unterminated":       (st(None, raw_header=b'{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'), "LATTN_E_FORMAT"),
    "trailing_json":      (st(None, raw_header=b'{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}x'), "LATTN_E_FORMAT"),
    "duplicate_name":     (st(None, raw_header=b'{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', data=f32(1, 2)), "LATTN_E_FORMAT"),
    "duplicate_field":    (st(None, raw_header=b'{"x":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}', data=f32(1, 2)), "LATTN_E_FORMAT"),
    "missing_field":      (st({"x": {"dtype": "F32", "shape": [2]}}, f32(1, 2)), "LATTN_E_FORMAT"),
    "unknown_field":      (st({"x": dict(ok_t, extra=1)}, f32(1, 2)), "LATTN_E_FORMAT"),
    "unknown_dtype":      (st({"x": dict(ok_t, dtype="C64")}, f32(1, 2)), "LATTN_E_UNSUPPORTED"),
    "negative_dim":       (st(None, raw_header=b'{"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', data=f32(1, 2)), "LATTN_E_FORMAT"),
    "real_number":        (st(None, raw_header=b'{"x":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}', data=f32(1, 2)), "LATTN_E_FORMAT"),
    "huge_integer":       (st(None, raw_header=b'{"x":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,8]}}', data=f32(1, 2)), "LATTN_E_FORMAT"),
    "too_many_dims":      (st({"x": dict(ok_t, shape=[1] * 9)}, f32(1, 2)), "LATTN_E_FORMAT"),
    "shape_overflow":     (st({"x": dict(ok_t, shape=[1 << 32, 1 << 32, 1 << 32])}, f32(1, 2)), "LATTN_E_FORMAT"),
    "size_mismatch":      (st({"x": dict(ok_t, shape=[3])}, f32(1, 2)), "LATTN_E_FORMAT"),
    "offsets_reversed":   (st({"x": dict(ok_t, data_offsets=[8, 0])}, f32(1, 2)), "LATTN_E_FORMAT"),
    "offsets_past_end":   (st({"x": dict(ok_t, data_offsets=[8, 16])}, f32(1, 2)), "LATTN_E_FORMAT"),
    "overlap":            (st({"a": ok_t, "b": ok_t}, f32(1, 2)), "LATTN_E_FORMAT"),
    "gap":                (st({"a": dict(ok_t, data_offsets=[4, 12])}, f32(0, 1, 2)), "LATTN_E_FORMAT"),
    "trailing_bytes":     (st({"x": ok_t}, f32(1, 2, 3)), "LATTN_E_FORMAT"),
    "bad_escape":         (st(None, raw_header=b'{"\\q":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}'), "LATTN_E_FORMAT"),
    "lone_surrogate":     (st(None, raw_header=b'{"\\ud800":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}'), "LATTN_E_FORMAT"),
    "nul_in_name":        (st(None, raw_header=b'{"a\\u0000b":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}'), "LATTN_E_FORMAT"),
    "metadata_not_string":(st({"__metadata__": {"k": 1}, "x": ok_t}, f32(1, 2)), "LATTN_E_FORMAT"),
    "duplicate_meta_key": (st(None, raw_header=b'{"__metadata__":{"k":"a","k":"b"}}'), "LATTN_E_FORMAT"),
    "deep_nesting":       (st(None, raw_header=b'{"x":{"dtype":"F32","shape":[[2]],"data_offsets":[0,8]}}', data=f32(1, 2)), "LATTN_E_FORMAT"),
    # keys and dtypes compare decoded, as Python's json reads them
    "escaped_metadata":   (st(None, raw_header=b'{"\\u005f_metadata__":{"k":"v"},"x":{"dtype":"\\u0046\\u0033\\u0032","shape":[2],"data_offsets":[0,8]}}', data=f32(1, 2)), "LATTN_OK"),
    "escaped_meta_twice": (st(None, raw_header=b'{"__metadata__":{},"\\u005f_metadata__":{}}'), "LATTN_E_FORMAT"),
    "escaped_dup_name":   (st(None, raw_header=b'{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"\\u0078":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', data=f32(1, 2)), "LATTN_E_FORMAT"),
    "escaped_field":      (st(None, raw_header=b'{"x":{"\\u0064type":"F32","shape":[2],"data_offsets":[0,8]}}', data=f32(1, 2)), "LATTN_OK"),
}
with open("EXPECTED", "w") as ex:
    for name, (data, status) in sorted(cases.items()):
        open(name + ".safetensors", "wb").write(data)
        ex.write("%s.safetensors %s\n" % (name, status))
