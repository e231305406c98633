"""Connection limits (issue 11): a flood of idle connections from one
address must not take the server from everybody else.  Connections past
the per-address limit are answered 503 with Retry-After (up to a margin,
then dropped at once), idle connections are closed after the connection
timeout, and /healthz from another loopback address (127.0.0.2) answers
promptly throughout.  Each test runs a server of its own."""
import os
import resource
import socket
import time

from harness import Service, check, eq, test

FLOOD = 1000


def raise_fd_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))


def connect(port, source="127.0.0.1", timeout=5.0):
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def get(sock, path="/healthz"):
    """Sends one GET on `sock`; the status code, the raw answer (None and
    b"" when the server closed or reset the connection)."""
    try:
        sock.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        return None, b""
    if not data.startswith(b"HTTP/1.1 "):
        return None, data
    return int(data[9:12]), data


def healthz_from(port, source):
    started = time.time()
    s = connect(port, source)
    try:
        status, _ = get(s)
    finally:
        s.close()
    return status, time.time() - started


def service(env, name, *extra):
    root = os.path.join(env.root, name)
    os.makedirs(root, exist_ok=True)
    return Service(root, env.cluster, name, worker=False,
                   conninfo=env.cluster.database(name.replace("-", "_")),
                   extra_args=extra)


@test
def idle_flood_from_one_address_leaves_healthz_answering(env):
    raise_fd_limit(FLOOD + 256)
    # The defaults: 64 connections from one address, 1000 in all.
    svc = service(env, "flood")
    flood = []
    try:
        for _ in range(FLOOD):
            try:
                flood.append(connect(svc.port))
            except OSError:
                pass
        time.sleep(0.5)
        for source in ("127.0.0.2", "127.0.0.3"):
            status, took = healthz_from(svc.port, source)
            eq(status, 200, "/healthz from %s during the flood" % source)
            check(took < 2.0, "/healthz from %s took %.2f s" % (source, took))
        # The flood's own connections: the first 64 are served, the next
        # few are told to come back later, the rest were closed at once.
        answers = [get(s) for s in flood]
        served = sum(1 for status, _ in answers if status == 200)
        refused = [data for status, data in answers if status == 503]
        eq(served, 64, "connections served from the flooding address")
        check(refused, "some connections past the limit answered 503")
        check(b"Retry-After:" in refused[0] and b"too_many_connections" in
              refused[0], "a 503 says why and when: %r" % refused[0][:300])
        check(len(refused) < FLOOD - served, "the rest were dropped")
    finally:
        for s in flood:
            s.close()
        svc.stop()


@test
def connections_past_the_total_limit_get_503_and_idle_ones_time_out(env):
    svc = service(env, "total", "--max-connections", "20",
                  "--connection-timeout", "1")
    held = []
    try:
        for i in range(20):
            held.append(connect(svc.port, "127.0.0.%d" % (10 + i % 5)))
        time.sleep(0.2)
        s = connect(svc.port, "127.0.0.2")
        status, data = get(s)
        s.close()
        eq(status, 503, "a connection past the total limit: %r" % data[:200])
        # The held connections are idle: the server closes them after the
        # connection timeout, and serves again.
        time.sleep(2.5)
        for s in held:
            s.settimeout(1)
            try:
                eq(s.recv(1), b"", "an idle connection was closed")
            except ConnectionResetError:
                pass
        status, took = healthz_from(svc.port, "127.0.0.2")
        eq(status, 200, "/healthz once the idle connections are gone")
    finally:
        for s in held:
            s.close()
        svc.stop()
