#!/usr/bin/env python3
"""Round trip and throughput between two rehearsal nodes (local_cluster.sh check).

This machine has neither ping nor iperf3, so this is both, over plain sockets:
  netcheck.py serve PORT                 UDP echo and a TCP sink on PORT; exits after one TCP transfer
  netcheck.py rtt HOST PORT COUNT        UDP round trips to HOST's echo: "MIN MEDIAN" in microseconds
  netcheck.py send HOST PORT SECONDS     streams to HOST's sink; prints the goodput in bit/s
Each prints its numbers on one line of stdout.
"""
import socket
import statistics
import sys
import time


def serve(port):
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("0.0.0.0", port))
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("0.0.0.0", port))
    tcp.listen(1)
    tcp.setblocking(False)
    udp.setblocking(False)
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(udp, selectors.EVENT_READ)
    sel.register(tcp, selectors.EVENT_READ)
    print("ready", flush=True)
    while True:
        for key, _ in sel.select():
            if key.fileobj is udp:
                data, peer = udp.recvfrom(2048)
                udp.sendto(data, peer)
            else:
                conn, _ = tcp.accept()
                conn.setblocking(True)
                total, first, last = 0, None, None
                buf = bytearray(1 << 20)
                while True:
                    n = conn.recv_into(buf)
                    if n == 0:
                        break
                    last = time.monotonic()
                    if first is None:
                        first = last
                    total += n
                conn.close()
                print(total, first, last, flush=True)
                return


def rtt(host, port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2.0)
    samples = []
    for i in range(count + 5):
        t0 = time.perf_counter_ns()
        s.sendto(b"x" * 56, (host, port))
        s.recvfrom(2048)
        if i >= 5:  # the first few pay for ARP and cold caches
            samples.append((time.perf_counter_ns() - t0) / 1000)
        time.sleep(0.002)
    print(f"{min(samples):.1f} {statistics.median(samples):.1f}")


def send(host, port, seconds):
    s = socket.create_connection((host, port))
    chunk = b"\0" * (1 << 20)
    sent, t0 = 0, time.monotonic()
    while time.monotonic() - t0 < seconds:
        s.sendall(chunk)
        sent += len(chunk)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)  # the sink closes once it has everything
    elapsed = time.monotonic() - t0
    print(f"{sent * 8 / elapsed:.0f}")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "serve":
        serve(int(sys.argv[2]))
    elif mode == "rtt":
        rtt(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif mode == "send":
        send(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        sys.exit(f"netcheck.py: unknown mode {mode}")
