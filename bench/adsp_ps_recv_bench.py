#!/usr/bin/python3
"""ADSP's parameter server receive path, reproduced and timed over loopback.

What it reproduces (joapolarbear/adsp @ 4066c9ddb9bf6fc302dafb0bd572daf929d48a64, cifar10/mySSP.py
PSThread and STRAIN_WK; cifar10/strain.py has the same PS socket code): one PS thread per worker, each
on its own port, all in one interpreter; per message a stop-and-wait protocol (length, "Start", data,
"OK"); the data read in recv(1024) calls appended to a string (`s += msg`); each pushed variable
decoded with np.copy(np.frombuffer(msg, float32)) and applied without a lock as
parameters[i] = parameters[i] + new_l / float(worker_num); a pull held by the staleness bound in a
loop that spins without sleeping (`while True: min_c = min(worker_step_list) ...`), then every
variable sent with one sendall(parameters[i].tobytes()). The variables are the CIFAR-10 tutorial
CNN's ten tensors (4,273,192 B per push or pull), in tf.trainable_variables() order.

What it does not reproduce:
- Python 2.7 (the paper's interpreter) is not in Debian 12; this runs Debian's Python 3.11. Python 2's
  `s += msg` on a str grows the string in place with an exact-size realloc (ceval's
  string_concatenate); Python 3 has no such path for bytes. --accumulate chooses: `py2` (default)
  emulates Python 2 with ctypes: libc realloc to the exact new size, then a copy of the chunk;
  `bytes` is Python 3's `s += msg` (a new object per chunk, quadratic); `bytearray` amortises.
  Python 2's GIL (released every 100 bytecodes, a signalling handoff) is not Python 3's (a
  5 ms switch interval); --switch-interval sets the latter.
- The workers are separate processes with efficient I/O on their side (sendall, recv_into), because
  in the paper they are other machines; here they share this machine's cores with the PS, which the
  reported PS CPU time (this process only) separates out.
- No TensorFlow: the PS's evaluation and the workers' training are absent (--compute sleeps).

Output: one CSV row per run (see HEADER) on stdout.
"""

import argparse
import ctypes
import multiprocessing as mp
import os
import socket
import sys
import threading
import time

import numpy as np

# tf.trainable_variables() of cifar10/model/cifar10.py: conv1 w/b, conv2 w/b, local3 w/b, local4 w/b,
# softmax_linear w/b, float32.
VARIABLE_BYTES = [19200, 256, 409600, 256, 3538944, 1536, 294912, 768, 7680, 40]
BUFFSIZE = 1024  # mySSP.py: self.buffsize = 1024, on both sides

HEADER = ("accumulate,workers,spinners,mode,switch_interval_s,duration_s,pushes,pulls,push_bytes,"
          "ps_cpu_s,ps_user_s,ps_sys_s,wall_push_rate_Bps,cpu_push_rate_Bps,mean_push_s,mean_pull_s,rounds,"
          "mean_round_s,loadavg_1min")

_libc = ctypes.CDLL(None)
_libc.realloc.restype = ctypes.c_void_p
_libc.realloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]


def recv_chunk(conn):
    msg = conn.recv(BUFFSIZE)
    if not msg:  # the peer closed (only at a run's end; Python 2's loop would spin forever)
        raise OSError("connection closed")
    return msg


class PS:
    def __init__(self, workers, port_base, staleness, accumulate):
        self.workers = workers
        self.port_base = port_base
        self.staleness = staleness
        self.accumulate = accumulate
        self.parameters = [np.zeros(n // 4, dtype=np.float32) for n in VARIABLE_BYTES]
        self.worker_step_list = [0] * workers
        self.stop = False
        self.push_times = []
        self.pull_times = []
        self.push_bytes = 0
        self.ready = threading.Barrier(workers + 1)
        self.sockets = []
        for i in range(workers):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", port_base + i))
            s.listen(3)
            self.sockets.append(s)

    def serve(self, index):
        conn, _ = self.sockets[index].accept()
        self.ready.wait()
        try:
            self.serve_loop(conn, index)
        except (OSError, ValueError):  # the run's end: the workers were terminated
            pass
        conn.close()

    def serve_loop(self, conn, index):
        while True:
            msg = conn.recv(BUFFSIZE)
            if b"Push" in msg:
                conn.sendall(b"start commit")
                t = time.perf_counter()
                self.recv_push(conn, index)
                self.push_times.append(time.perf_counter() - t)
            elif b"Pull" in msg:
                t = time.perf_counter()
                self.return_pull(conn, index)
                self.pull_times.append(time.perf_counter() - t)
                conn.recv(BUFFSIZE)  # check(): "Check?"
                conn.sendall(b"Stop" if self.stop else b"No")
            else:  # "Exit" or closed
                break

    def recvmsg(self, conn):
        length = int(conn.recv(BUFFSIZE))
        conn.sendall(b"Start")
        if self.accumulate == "py2":
            # Python 2's str += str: realloc to the exact new size, copy the chunk in.
            buf, size = None, 0
            while length > 0:
                msg = recv_chunk(conn)
                buf = _libc.realloc(buf, size + len(msg))
                ctypes.memmove(buf + size, msg, len(msg))
                size += len(msg)
                length -= len(msg)
            s = ctypes.string_at(buf, size) if size else b""
            _libc.free(buf)
        elif self.accumulate == "bytes":
            s = b""
            while length > 0:
                msg = recv_chunk(conn)
                s += msg
                length -= len(msg)
        else:
            s = bytearray()
            while length > 0:
                msg = recv_chunk(conn)
                s += msg
                length -= len(msg)
        conn.sendall(b"OK")
        return s

    def sendmsg(self, conn, s):
        conn.sendall(str(len(s)).encode())
        conn.recv(BUFFSIZE)
        conn.sendall(s)
        conn.recv(BUFFSIZE)

    def recv_push(self, conn, index):
        for i in range(len(self.parameters)):
            msg = self.recvmsg(conn)
            self.push_bytes += len(msg)
            new_l = np.copy(np.frombuffer(msg, dtype=np.float32))
            self.parameters[i] = self.parameters[i] + new_l / float(self.workers)
        fields = self.recvmsg(conn).split(b",")
        self.worker_step_list[index] = int(fields[2])

    def spin(self, index):
        """A held worker's PS thread without its worker: return_pull's wait loop until the run ends."""
        while True:
            min_c = min(self.worker_step_list)
            if self.worker_step_list[index] - min_c < self.staleness or self.stop:
                break

    def return_pull(self, conn, index):
        while True:
            min_c = min(self.worker_step_list)
            if self.worker_step_list[index] - min_c < self.staleness or self.stop:
                break
        for i in range(len(self.parameters)):
            self.sendmsg(conn, self.parameters[i].tobytes())
        conn.sendall(str(min_c).encode())


def worker(index, port_base, staleness, compute_s, stop_at):
    """The worker side with efficient I/O (another machine in the paper)."""
    rng = np.random.default_rng(index)
    payloads = [rng.standard_normal(n // 4).astype(np.float32).tobytes() for n in VARIABLE_BYTES]
    skt = socket.create_connection(("127.0.0.1", port_base + index))
    pull_buf = bytearray(max(VARIABLE_BYTES))

    def sendmsg(s):
        skt.sendall(str(len(s)).encode())
        skt.recv(BUFFSIZE)
        skt.sendall(s)
        skt.recv(BUFFSIZE)

    def recvmsg():
        length = int(skt.recv(BUFFSIZE))
        skt.sendall(b"Start")
        view, got = memoryview(pull_buf), 0
        while got < length:
            got += skt.recv_into(view[got:length])
        skt.sendall(b"OK")

    ep, min_c = 0, 0
    while time.time() < stop_at:
        ep += 1
        if compute_s > 0:
            time.sleep(compute_s)
        skt.sendall(b"Push")
        skt.recv(BUFFSIZE)
        for p in payloads:
            sendmsg(p)
        sendmsg(b"%20.15f, %20.15f, %d, %20.15f, %d, %20.15f" % (0.0, 0.0, ep, 0.0, 1, 0.0))
        if ep - min_c >= staleness:
            skt.sendall(b"Pull")
            for _ in VARIABLE_BYTES:
                recvmsg()
            min_c = int(skt.recv(BUFFSIZE))
            skt.sendall(b"Check?")
            if b"Stop" in skt.recv(BUFFSIZE):
                break
    skt.sendall(b"Exit")
    skt.close()


def run(args, workers):
    sys.setswitchinterval(args.switch_interval)
    staleness = 10**9 if args.mode == "push" else args.staleness
    ps = PS(workers, args.port_base, staleness, args.accumulate)
    threads = [threading.Thread(target=ps.serve, args=(i,), daemon=True) for i in range(workers)]
    for t in threads:
        t.start()
    if args.spinners:
        # Held threads that never get released during the run: their worker is "ahead" by 2**62 steps.
        ps.worker_step_list.extend([2**62] * args.spinners)
        for h in range(args.spinners):
            threading.Thread(target=ps.spin, args=(workers + h,), daemon=True).start()
    stop_at = time.time() + args.warmup + args.duration + 3600
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=worker, args=(i, args.port_base, staleness, args.compute, stop_at))
             for i in range(workers)]
    for p in procs:
        p.start()
    ps.ready.wait()
    time.sleep(args.warmup)
    pushes0, pulls0, bytes0 = len(ps.push_times), len(ps.pull_times), ps.push_bytes
    steps0 = min(ps.worker_step_list)
    wall0, cpu0, times0 = time.perf_counter(), time.process_time(), os.times()
    time.sleep(args.duration)
    wall, cpu, times1 = time.perf_counter() - wall0, time.process_time() - cpu0, os.times()
    user, system = times1.user - times0.user, times1.system - times0.system
    pushes, pulls = len(ps.push_times) - pushes0, len(ps.pull_times) - pulls0
    push_bytes = ps.push_bytes - bytes0
    rounds = min(ps.worker_step_list) - steps0
    push_t = ps.push_times[pushes0:pushes0 + pushes]
    pull_t = ps.pull_times[pulls0:pulls0 + pulls]
    ps.stop = True
    for p in procs:
        p.terminate()
    for p in procs:
        p.join()
    for s in ps.sockets:
        s.close()
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
    row = [args.accumulate, workers, args.spinners, args.mode, args.switch_interval, round(wall, 3), pushes, pulls,
           push_bytes, round(cpu, 3), round(user, 3), round(system, 3), round(push_bytes / wall), round(push_bytes / cpu) if cpu else 0,
           round(mean(push_t), 5), round(mean(pull_t), 5),
           rounds if args.mode == "bsp" else "", round(wall / rounds, 4) if args.mode == "bsp" and rounds else "",
           os.getloadavg()[0]]
    print(",".join(str(x) for x in row), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", default="1,2,4,8,18", help="comma-separated worker counts")
    ap.add_argument("--mode", choices=["push", "bsp"], default="push",
                    help="push: workers only push (the PS's ingest); bsp: push then a pull held until "
                         "every worker pushed (staleness 1), the held PS threads spinning")
    ap.add_argument("--spinners", type=int, default=0,
                    help="push mode: this many extra PS threads spinning in return_pull's wait loop, as "
                         "held workers' threads do (mySSP.py), while the workers push")
    ap.add_argument("--accumulate", choices=["py2", "bytes", "bytearray"], default="py2")
    ap.add_argument("--staleness", type=int, default=1)
    ap.add_argument("--compute", type=float, default=0.0, help="worker sleep per step, s")
    ap.add_argument("--switch-interval", type=float, default=0.005, help="sys.setswitchinterval, s")
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--port-base", type=int, default=24200)
    ap.add_argument("--no-header", action="store_true")
    args = ap.parse_args()
    if not args.no_header:
        print(HEADER, flush=True)
    for n in [int(x) for x in args.workers.split(",")]:
        run(args, n)
        args.port_base += n  # fresh ports: the previous run's may sit in TIME_WAIT


if __name__ == "__main__":
    main()
