"""The domain-free simulation core: time, clock domains, the event queue, statistics, the
epoch-by-epoch run loop with its watchdog. Nothing here knows about GPUs or DRAM."""
