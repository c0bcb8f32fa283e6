"""A running model-inspector server for the Python tests: started with the
given command line, its printed URL read, always stopped by close()."""
import http.client
import json
import signal
import subprocess
import threading
import urllib.parse

from conftest import BINARY


class ServedProcess:
    def __init__(self, argv, start_timeout=120):
        self.proc = subprocess.Popen([BINARY, *map(str, argv)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self._read_line(start_timeout)
        if not line.startswith("http://"):
            self.close()
            raise AssertionError(f"no URL printed: {line!r}; stderr: {self.proc.stderr.read()}")
        self.url = line
        parts = urllib.parse.urlsplit(line)
        self.host, self.port = parts.hostname, parts.port
        self.query = parts.query

    def _read_line(self, timeout):
        box = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        return box[0].strip() if box else ""

    def request(self, path, method="GET", headers=None, body=None, timeout=60):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, dict(resp.getheaders()), resp.read()
        finally:
            conn.close()

    def get_json(self, path, status=200, **kwargs):
        code, headers, body = self.request(path, **kwargs)
        assert code == status, (path, code, body[:300])
        assert headers["Content-Type"].startswith("application/json"), headers
        return json.loads(body)

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
        for f in (self.proc.stdout, self.proc.stderr):
            f.close()
        return self.proc.returncode
