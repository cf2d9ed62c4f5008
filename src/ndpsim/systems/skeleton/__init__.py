"""What every system kind does the same way, so that a kind supplies only its model, its layout
and its own counters.

* :mod:`.program`: a program's run: the hardware built, then its kernel launches one after
  another on the engine's loop (:func:`ndpsim.engine.loop.steps`), with the kind's controllers,
  the ``on_epoch`` hook, a timeline and a stepping caller's pauses; what a stepped run shows
  between steps (:class:`.program.LaunchView`).
* :mod:`.memory`: the DRAM of all cubes as one address space: the address mapping over a DRAM
  preset's fields, the page table that places a program's pages, physical lines.
* :mod:`.links`: the config section of the SerDes links between a host and its memory cubes
  (and among the cubes), for every kind with stacks behind links.
* :mod:`.checks`: the memory path's invariants (requests drained, every DRAM access and TSV
  crossing conserved, packets no smaller than their headers, links and DRAM buses never
  busier than they can be); a kind adds the checks of its own components.
* :mod:`.timeline`: sampling a run's components into a timeline window by window: the links'
  and the DRAM channels' tracks, and the controller that gathers a kind's samplers.
* :mod:`.results`: a run's counters into its result: the statistics registry of the cores and
  the memory path, the headline figures every kind reports, and the result itself.

Energy by component is :mod:`ndpsim.energy` (cores, links, DRAM), summed by each kind over the
components it has.
"""
