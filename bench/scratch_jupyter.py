"""jupyter_client + ipykernel side of bench/scratchpad.sh.

Starts a kernel, runs N trivial cells (`1+1`) and waits for each reply and
the kernel's return to idle. Prints "cold_us median_us p99_us" like
scratch_rtt (cold: kernel start through the first cell's reply).
"""
import sys
import time

from jupyter_client.manager import start_new_kernel


def run_cell(kc):
    msg_id = kc.execute("1+1", store_history=False)
    reply = kc.get_shell_msg(timeout=30)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=30)
    assert reply["content"]["status"] == "ok", reply["content"]
    while True:  # the result and the idle status come on iopub
        m = kc.get_iopub_msg(timeout=30)
        if (m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"):
            return


def main():
    n = int(sys.argv[1])
    t0 = time.perf_counter_ns()
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        run_cell(kc)
        cold = time.perf_counter_ns() - t0
        times = []
        for _ in range(n):
            s = time.perf_counter_ns()
            run_cell(kc)
            times.append(time.perf_counter_ns() - s)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    times.sort()
    print(cold // 1000, times[n // 2] // 1000, times[n * 99 // 100] // 1000)


if __name__ == "__main__":
    main()
