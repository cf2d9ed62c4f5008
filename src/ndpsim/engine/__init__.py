"""The domain-free simulation core: time, clock domains, the event queue, event kinds, FIFO
queues, statistics, the epoch-by-epoch run loop with its watchdog and controllers. Nothing here
knows about GPUs or DRAM."""
