"""Sends an 11 MiB chat request with Python's standard library, which
writes the whole body before it reads the answer (as requests and the
openai SDK's httpx do), and checks that it reads Sluice's 413
body_too_large rather than a connection reset.

Usage: python3 oversized_body.py URL TOKEN
Exit status 0: the 413 was read; 1: another answer; 2: a connection error.
"""
import json
import sys
import urllib.error
import urllib.request

url, token = sys.argv[1], sys.argv[2]
body = json.dumps({"model": "openai/gpt-4o-mini",
                   "messages": [{"role": "user", "content": "a" * (11 << 20)}]}).encode()
req = urllib.request.Request(url, data=body, headers={"Authorization": "Bearer " + token,
                                                      "Content-Type": "application/json"})
try:
    urllib.request.urlopen(req, timeout=30)
    print("the oversized request succeeded")
    sys.exit(1)
except urllib.error.HTTPError as e:
    payload = json.loads(e.read())
    print(e.code, payload["error"]["code"])
    sys.exit(0 if e.code == 413 and payload["error"]["code"] == "body_too_large" else 1)
except OSError as e:
    print("connection error:", e)
    sys.exit(2)
