"""A component's state handed to compiled code as one pointer.

A component keeps its state as a ``NamedTuple`` of NumPy arrays, which Python code (results,
checks, policies, tests) reads by field name. numba passes a tuple *by value*: every array is
about seven machine words, so calling a compiled function with the SM's state (forty-odd
arrays) and a few more components moves hundreds of words per call. That is why the timing
model used to be inlined into one function by numba's IR inliner, which cost most of its
compile time.

:func:`reference` gives compiled code the same state as a :class:`Reference`: a pointer to a
block of memory holding the arrays' descriptors, field after field. In compiled code
``ref.field`` reads like ``state.field`` and yields the same array (same memory: what compiled
code writes, Python reads in the named tuple), and a call passes one word per component. The
block never changes once written, so its loads are marked invariant and the optimiser may hoist
them out of loops; no reference counts are taken (compiled code never owns these arrays: the
:class:`Reference` keeps the named tuple, and with it the arrays, alive).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import typeof, types
from numba._dispatcher import compute_fingerprint
from numba.core import cgutils, imputils
from numba.core.datamodel import models
from numba.core.extending import (
    NativeValue,
    intrinsic,
    lower_getattr_generic,
    register_model,
    unbox,
)
from numba.core.registry import cpu_target
from numba.core.typing.templates import AttributeTemplate, infer_getattr

from ndpsim.numba_cache import compiled, source_stamp


class ReferenceType(types.Type):
    """The numba type of a :class:`Reference` to a named tuple of ``fields`` ((name, numba
    type) pairs) of class ``owner``. Its name carries a digest of this module, whose code
    decides how compiled code reads a reference: editing it recompiles every function that
    takes one (their cache entries are keyed by their argument types)."""

    def __init__(self, owner: str, fields: tuple[tuple[str, types.Type], ...]):
        self.owner = owner
        self.fields = tuple(fields)
        self.index = {name: k for k, (name, _) in enumerate(self.fields)}
        version = source_stamp(ReferenceType)[:8]
        super().__init__(name=f"Reference[{owner}@{version}]{self.fields}")

    def decorate_argument(self, context, argument) -> None:
        """Tell LLVM what holds for a reference argument: nothing writes the block while
        compiled code runs (so no store through another pointer changes what it holds), and
        it is this many bytes (so its fields may be read ahead of a branch)."""
        argument.add_attribute("noalias")
        argument.add_attribute("nonnull")
        argument.attributes.dereferenceable = _block_bytes(self)


@register_model(ReferenceType)
class _ReferenceModel(models.PrimitiveModel):
    """A pointer to the fields' native (data) representations, one after another."""

    def __init__(self, dmm, fe_type):
        members = [dmm.lookup(t).get_data_type() for _, t in fe_type.fields]
        super().__init__(dmm, fe_type, ir.LiteralStructType(members).as_pointer())


@infer_getattr
class _ReferenceAttributes(AttributeTemplate):
    key = ReferenceType

    def generic_resolve(self, typ, attr):
        if attr in typ.index:
            return typ.fields[typ.index[attr]][1]
        return None


@lower_getattr_generic(ReferenceType)
def _get_field(context, builder, typ, value, attr):
    k = typ.index[attr]
    field_type = typ.fields[k][1]
    slot = cgutils.gep_inbounds(builder, value, 0, k)
    data = builder.load(slot)
    # the block is written once, before any compiled code reads it
    data.set_metadata("invariant.load", builder.module.add_metadata([]))
    result = context.data_model_manager[field_type].from_data(builder, data)
    return imputils.impl_ret_borrowed(context, builder, field_type, result)


@unbox(ReferenceType)
def _unbox_reference(typ, obj, c):
    address = c.pyapi.object_getattr_string(obj, "address")
    pointer = c.pyapi.long_as_voidptr(address)
    c.pyapi.decref(address)
    value = c.builder.bitcast(pointer, c.context.get_value_type(typ))
    return NativeValue(value, is_error=cgutils.is_not_null(c.builder, c.pyapi.err_occurred()))


@cache
def reference_type(state_type: types.BaseNamedTuple) -> ReferenceType:
    """The reference type of named tuples of numba type ``state_type``."""
    members = state_type.types
    fields = tuple(zip(state_type.fields, members, strict=True))
    return ReferenceType(state_type.instance_class.__name__, fields)


@intrinsic
def _write_fields(typingctx, state, address, state_class):
    """Store every field of ``state`` (a named tuple of class ``state_class``) at ``address``,
    in the layout of its reference type."""
    target = reference_type(state)

    def codegen(context, builder, signature, args):
        value, at, _ = args
        block = builder.inttoptr(at, context.get_value_type(target))
        for k, field_type in enumerate(state.types):
            member = builder.extract_value(value, k)
            data = context.data_model_manager[field_type].as_data(builder, member)
            builder.store(data, cgutils.gep_inbounds(builder, block, 0, k))
        return context.get_dummy_value()

    return types.none(state, types.uintp, state_class), codegen


@cache
def _filler(state_class: type) -> Callable:
    """The compiled function that writes a ``state_class`` named tuple's block: one per class,
    each cached on its own. (numba keeps one index of signatures per cached function, and
    reading it imports the class of every named tuple in it: a function shared by every class
    would fail to load in a process that cannot import one of them, a test's, say.)"""

    def fill(state, address):
        _write_fields(state, address, state_class)

    return compiled(fill, entry=True)


@cache
def _block_bytes(target: ReferenceType) -> int:
    context = cpu_target.target_context
    members = [context.get_data_type(t) for _, t in target.fields]
    return context.get_abi_sizeof(ir.LiteralStructType(members))


class Reference:
    """A named tuple of arrays as compiled code receives it (see the module); ``state`` is the
    named tuple itself."""

    __slots__ = ("_block", "_numba_type_", "address", "state")

    def __init__(self, state: NamedTuple):
        self._numba_type_ = _reference_type_of(state)
        self._block = np.zeros(_block_bytes(self._numba_type_), dtype=np.uint8)
        self.address = self._block.ctypes.data
        self.state = state
        _filler(type(state))(state, self.address)

    def __repr__(self) -> str:
        return f"Reference({self.state!r})"


_known: dict[tuple[type, bytes], ReferenceType] = {}


def _reference_type_of(state: NamedTuple) -> ReferenceType:
    """The reference type for ``state``, found by numba's fingerprint of the value (a few
    microseconds) rather than by typing it (hundreds, for a tuple of forty arrays)."""
    key = (type(state), compute_fingerprint(state))
    known = _known.get(key)
    if known is None:
        state_type = typeof(state)
        if not isinstance(state_type, types.BaseNamedTuple):
            raise TypeError(f"a reference is to a named tuple, not {type(state).__name__}")
        known = _known[key] = reference_type(state_type)
    return known


def reference(state: NamedTuple) -> Reference:
    """``state`` (a named tuple of arrays and numbers) for compiled code, as one pointer."""
    return Reference(state)


def references(state: NamedTuple) -> tuple:
    """Each field of a system's state that is itself a named tuple (a component) as a
    :class:`Reference`, the others (an array, a small tuple) as they are: the arguments of the
    system's compiled loop."""
    return tuple(reference(part) if _is_named_tuple(part) else part for part in state)


def _is_named_tuple(value: object) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


__all__ = ["Reference", "ReferenceType", "reference", "reference_type", "references"]
