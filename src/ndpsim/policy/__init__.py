"""Policies: the decisions a system makes, separate from the hardware that carries them out.

Each family keeps a :class:`~ndpsim.registry.Registry` filled by the modules of its
package, so a new policy is one file that registers itself:

* :mod:`ndpsim.policy.mapping`: how physical addresses spread over cubes and vaults;
* :mod:`ndpsim.policy.offload`: which code runs near memory, where, and how it is controlled.

A policy sees configuration and observations (arrays of counters, the plan of a launch), never
the components that produce them.
"""
