#!/usr/bin/env python3
"""Writes the committed seed corpora under fuzz/corpus/<target>/ (deterministic).

Run from anywhere: `python3 fuzz/make_seeds.py`. It rewrites only the seed-NN files it
owns, so inputs added by hand (e.g. minimised crash reproducers) are kept.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

REQ = b'{"jsonrpc":"2.0","method":"status","params":{},"id":1}'
NOTE = b'{"jsonrpc":"2.0","method":"session/update","params":{"text":"a\\nb"}}'
RESP = b'{"jsonrpc":"2.0","result":null,"id":"zc-out-0"}'
ERR = b'{"jsonrpc":"2.0","error":{"code":-32601,"message":"m","data":{"method":"x"}},"id":3}'
DEEP = b"[" * 200 + b"]" * 200
DEEP_OBJ = b'{"a":' * 130 + b"1" + b"}" * 130

# The envelope table, row by row, plus the byte-level edge cases.
ENVELOPES = [
    REQ,
    b'{"jsonrpc":"2.0","method":"m","params":[1,"x",null],"id":"a"}',
    b'{"jsonrpc":"2.0","method":"m","id":null}',
    b'{"jsonrpc":"2.0","method":"m","id":1.5e3}',
    NOTE,
    RESP,
    ERR,
    b'{"jsonrpc":"2.0","error":{"code":1.5,"message":"m"},"id":1}',
    b'{"jsonrpc":"2.0","error":"boom","id":1}',
    b'{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":1}',
    b'{"jsonrpc":"2.0","result":1,"id":[1]}',
    b'{"jsonrpc":"2.0","result":1}',
    b'{"jsonrpc":"1.0","method":"m","id":7}',
    b'{"jsonrpc":"2.0","method":5,"id":"x"}',
    b'{"jsonrpc":"2.0","method":"m","params":3,"id":1}',
    b'{"jsonrpc":"2.0","method":"m","id":{"a":1}}',
    b'{"jsonrpc":"1.0","method":"m"}',
    b'{"jsonrpc":"2.0","id":3}',
    b"{}",
    b'{"jsonrpc":"2.0","method":"m","result":1,"id":3}',
    b'[{"jsonrpc":"2.0","method":"x","id":1}]',
    b'"just a string"',
    b"null",
    b"{nope",
    b'{"a":"\xff"}',
    b"\xfe\xff",
    b'{"jsonrpc":"2.0","method":"m","id":1,"id":{}}',
    b'{"jsonrpc":"2.0","method":"\\u0000\\ud83d\\ude00","id":18446744073709551616}',
    DEEP,
    DEEP_OBJ,
]

# codec_chunking inputs: byte 0 = k (low nibble: how many length bytes follow; high
# nibble: the tiny cap - 1), then k chunk lengths (each b + 1), then the stream.
STREAMS = [
    (b"\x00", REQ + b"\n"),
    (b"\x01\x00", REQ + b"\n" + RESP + b"\n"),
    (b"\x02\x02\x06", REQ + b"\r\n" + NOTE + b"\r\n"),
    (b"\x03\x00\x01\x40", b"\n\n  \r\n\t\n" + REQ + b"\n\r\n"),
    (b"\x01\x10", REQ),  # no final newline
    (b"\x01\x3f", REQ + b"\r"),  # final CR at end of stream
    (b"\x71\x07", b"12345678\r\n1234567\r\n123456789\n"),  # around the tiny cap (8)
    (b"\x31\x03", b"1234\r" + b"\n" + b"12345\r\n"),
    (b"\x02\x3f\x3f", b"x" * 64 + b"\r\n" + b"y" * 65 + b"\n" + b"z" * 66 + b"\r\n"),
    (b"\x01\x00", b"x" * 200 + b"\n{}\n"),  # oversized, fed a byte at a time
    (b"\x04\xff\x00\x10\x80", b"a" * 300 + b"\r\n" + REQ + b"\n"),
    (b"\x01\x05", b"\r\r\n\r\n \r\r\n"),
    (b"\x00", b"{\"a\":\"\xff\xfe\"}\n\xc3\x28\n"),  # invalid UTF-8 lines
    (b"\x01\x7f", DEEP + b"\n"),
    (b"\x02\x00\x01", b"\n" * 40),
    (b"\x0f" + bytes(range(1, 16)), b"\n".join([REQ, NOTE, RESP, ERR]) + b"\n"),
    (b"\xf1\x0f", b" " * 17 + b"\n" + b" " * 16 + b"\r\n" + b"{}"),
    (b"\x01\x00", b""),
    (b"\x02\x01\x01", b"\r"),
    (b"\x01\x02", b"{}\n" * 30),
]

# params_decode inputs: byte 0 picks the method (see the target's docs), the rest is the
# params. Indices follow the table in crates/zeroclaw-daemon/src/methods/mod.rs.
M = {
    "initialize": 0,
    "status": 1,
    "shutdown": 2,
    "session/new": 3,
    "session/list": 4,
    "session/load": 5,
    "session/messages": 6,
    "session/prompt": 7,
    "session/cancel": 8,
    "session/approve": 9,
    "session/delete": 10,
    "unknown": 11,
}
SID = "00000000-0000-0000-0000-000000000000"
PARAMS = [
    (M["initialize"], {"protocolVersion": 1}),
    (M["initialize"], {"protocolVersion": 2, "clientInfo": {"name": "x", "version": "1"}}),
    (M["initialize"], {"protocolVersion": "1"}),
    (M["initialize"], {"protocolVersion": 1, "capabilities": {"elicitation": {}}}),
    (M["initialize"] | 0x80, {"protocolVersion": 1}),
    (M["status"], {}),
    (M["status"] | 0x40, None),
    (M["status"] | 0x80, {}),
    (M["shutdown"], {}),
    (M["session/new"], {"cwd": "/", "title": "t", "model": "m"}),
    (M["session/new"], {"cwd": "relative"}),
    (M["session/new"], {"cwd": "/nonexistent/dir"}),
    (M["session/new"], {"bogus": 1}),
    (M["session/list"], []),
    (M["session/load"], {"sessionId": SID, "replay": True}),
    (M["session/load"], {"sessionId": 5}),
    (M["session/messages"], {"sessionId": SID, "limit": 0, "before": -1}),
    (M["session/messages"], {"sessionId": SID, "limit": -1}),
    (M["session/messages"], {"sessionId": SID, "limit": 1e300}),
    (M["session/prompt"], {"sessionId": SID, "prompt": "hi"}),
    (M["session/prompt"], {"sessionId": SID, "prompt": "   "}),
    (M["session/cancel"], {"sessionId": SID}),
    (M["session/approve"], {"sessionId": SID, "requestId": "r", "decision": "allow_once"}),
    (M["session/approve"], {"sessionId": SID, "requestId": "r", "decision": "maybe"}),
    (M["session/delete"], {"sessionId": SID}),
    (M["session/delete"], [SID]),
    (M["unknown"], {}),
    (M["status"], 7),
]


def write(target, items):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    for i, data in enumerate(items):
        with open(os.path.join(d, f"seed-{i:02}"), "wb") as f:
            f.write(data)


def main():
    write("envelope_classify", ENVELOPES)
    write("codec_chunking", [head + body for head, body in STREAMS])
    params = []
    for head, value in PARAMS:
        body = b"" if value is None else json.dumps(value, separators=(",", ":")).encode()
        params.append(bytes([head]) + body)
    # Two that are not JSON, so the `arbitrary` path is seeded too.
    params.append(bytes([M["session/new"]]) + b"\x07\x00\x09\x01\xff\x10")
    params.append(bytes([M["session/approve"]]) + b"\x07\x03\x0d\x05\x01\x0e\x05\x00\x0f\x05\x01")
    write("params_decode", params)


if __name__ == "__main__":
    main()
