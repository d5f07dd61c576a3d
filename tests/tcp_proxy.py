"""A TCP proxy on 127.0.0.1 that a test can cut: the way to drop a browser's live
connections without stopping the hub."""

from __future__ import annotations

import socket
import threading


def pump(source: socket.socket, target: socket.socket) -> None:
    """Copy one direction of a proxied connection until either side closes, then close both."""
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class CuttableProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.refusing = threading.Event()
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.refusing.is_set():
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            with self._lock:
                self._open |= {client, upstream}
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=pump, args=(source, target), daemon=True).start()

    def cut(self, *, refuse: bool) -> None:
        """Drop every open connection; with `refuse`, new ones too until `resume`."""
        if refuse:
            self.refusing.set()
        with self._lock:
            for sock in self._open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._open.clear()

    def resume(self) -> None:
        self.refusing.clear()

    def close(self) -> None:
        self.listener.close()
        self.cut(refuse=True)
