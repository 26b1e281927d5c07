"""How the code meets the device it runs on: where the hot path may read a device value on the
host to skip work (``host_reads``: the CPU, never CUDA or compiled code).
"""
