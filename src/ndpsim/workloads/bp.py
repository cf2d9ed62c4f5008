"""BP: one back-propagation training step of a two-layer perceptron (n inputs, 16 hidden units,
1 output), as Rodinia's backprop. The device runs the input layer's forward pass (shared-memory
products and a log-step tree reduction per 16 x 16 tile, partial sums per CTA) and the update of
the large input->hidden weight matrix with momentum; the host does the small rest as Rodinia's
host code does. It is in the suite as a mix of a shared-memory reduction and a streaming update.

Rodinia draws every weight in [0, 1), which saturates each hidden sigmoid at exactly 1.0 and
makes every hidden delta zero; the weights here are centred and scaled by 1/sqrt(n) so the step
does real arithmetic, and the previous-change arrays start small and non-zero (as after an
earlier step) so the momentum term is exercised. The memory access pattern is unchanged.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register

HIDDEN = 16
TILE = 16
ETA = 0.3  # Rodinia's learning rate
MOMENTUM = 0.3  # and momentum
TARGET = 0.1  # Rodinia's target output


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@register
class BackPropagation(Workload):
    name = "bp"
    title = "back-propagation training step, 16 hidden units (Rodinia backprop)"
    papers = ("tom", "sndp", "alp", "aimm")
    sizes = {
        "tiny": {"n": 1_024},
        "small": {"n": 65_536},
        "paper": {"n": 262_144},
    }
    # The device sums each hidden unit's n products in float32 in tree order (the reference in
    # float64) and the host then works in float32 as Rodinia's does: hidden sums are O(1) and
    # off by up to ~1e-6, hidden deltas by ~1e-5 relative. Weight changes (up to ~1e-2) that
    # nearly cancel against the momentum term or the old weight keep an absolute error of up
    # to ~1.5e-8 (measured at "paper", 7e-9 at "small"), hence the atol.
    rtol = 1e-4
    atol = 1e-7

    def inputs(self, rng):
        n = self.params["n"]
        if n % TILE:
            raise ValueError(f"bp needs a multiple of {TILE} inputs, got {n}")
        units = np.empty(n + 1, dtype=np.float32)
        units[0] = 1.0  # bias unit
        units[1:] = rng.random(n, dtype=np.float32)
        scale = np.float32(3.0 / np.sqrt(n))
        weights = ((rng.random((n + 1, HIDDEN + 1), dtype=np.float32) * 2 - 1) * scale).astype(
            np.float32
        )
        hidden_weights = (rng.random((HIDDEN + 1, 2), dtype=np.float32) * 2 - 1).astype(np.float32)
        prev = (rng.random((n + 1, HIDDEN + 1), dtype=np.float32) * 2 - 1) * np.float32(1e-3)
        hidden_prev = (rng.random((HIDDEN + 1, 2), dtype=np.float32) * 2 - 1) * np.float32(1e-3)
        return {
            "input": units,
            "weights": weights,
            "prev_change": prev.astype(np.float32),
            "hidden_weights": hidden_weights,
            "hidden_prev": hidden_prev.astype(np.float32),
        }

    def run(self, device: Device, inputs):
        n = self.params["n"]
        ctas = n // TILE
        f32 = np.float32
        d_input = device.to_device(inputs["input"], "input_units")
        d_weights = device.to_device(inputs["weights"], "input_weights")
        d_partial = device.zeros(ctas * HIDDEN, np.float32, "partial_sums")
        device.launch("bp_layerforward", (1, ctas), (TILE, TILE), [d_input, d_weights, d_partial])
        partial = device.from_device(d_partial, np.float32, ctas * HIDDEN).reshape(ctas, HIDDEN)

        # Host, in float32 as Rodinia's C: finish the input layer, run the output layer,
        # compute both error terms and adjust the hidden->output weights.
        weights0 = inputs["weights"][0]
        hidden = np.empty(HIDDEN + 1, dtype=f32)
        hidden[0] = 1.0
        sums = np.cumsum(partial, axis=0, dtype=f32)[-1] + weights0[1:]  # CTA by CTA, in order
        with np.errstate(over="ignore"):  # a sum below -88 saturates to 0, as C's expf does
            hidden[1:] = f32(1.0) / (f32(1.0) + np.exp(-sums))
        hw = inputs["hidden_weights"].copy()
        out_sum = f32(0.0)
        for k in range(HIDDEN + 1):
            out_sum = f32(out_sum + hw[k, 1] * hidden[k])
        with np.errstate(over="ignore"):
            output = f32(1.0) / (f32(1.0) + np.exp(-out_sum))
        out_delta = output * (f32(1.0) - output) * (f32(TARGET) - output)
        hidden_delta = np.zeros(HIDDEN + 1, dtype=f32)
        for k in range(1, HIDDEN + 1):
            hidden_delta[k] = hidden[k] * (f32(1.0) - hidden[k]) * (out_delta * hw[k, 1])
        hp = inputs["hidden_prev"].copy()
        for k in range(HIDDEN + 1):
            change = f32(ETA) * out_delta * hidden[k] + f32(MOMENTUM) * hp[k, 1]
            hw[k, 1] += change
            hp[k, 1] = change

        d_delta = device.to_device(hidden_delta, "hidden_delta")
        d_prev = device.to_device(inputs["prev_change"], "input_prev_change")
        device.launch(
            "bp_adjust_weights", (1, ctas), (TILE, TILE),
            [d_delta, d_input, d_weights, d_prev, f32(ETA), f32(MOMENTUM)],
        )  # fmt: skip
        size = (n + 1) * (HIDDEN + 1)
        return {
            "hidden": hidden,
            "output": np.array([output], dtype=f32),
            "hidden_weights": hw,
            "hidden_prev": hp,
            "weights": device.from_device(d_weights, np.float32, size).reshape(n + 1, HIDDEN + 1),
            "prev_change": device.from_device(d_prev, np.float32, size).reshape(n + 1, HIDDEN + 1),
        }

    def reference(self, inputs):
        x = inputs["input"].astype(np.float64)
        w = inputs["weights"].astype(np.float64)
        hidden = np.ones(HIDDEN + 1)
        hidden[1:] = _sigmoid(x @ w[:, 1:])  # x[0] = 1 brings in the bias row
        hw = inputs["hidden_weights"].astype(np.float64)
        output = _sigmoid(hidden @ hw[:, 1])
        out_delta = output * (1 - output) * (TARGET - output)
        hidden_delta = hidden * (1 - hidden) * out_delta * hw[:, 1]
        hidden_delta[0] = 0.0
        hp = inputs["hidden_prev"].astype(np.float64)
        hidden_change = ETA * out_delta * hidden + MOMENTUM * hp[:, 1]
        hw[:, 1] += hidden_change
        hp[:, 1] = hidden_change
        prev = inputs["prev_change"].astype(np.float64)
        change = ETA * np.outer(x, hidden_delta) + MOMENTUM * prev
        change[:, 0] = prev[:, 0]  # column 0 is not a weight: left alone
        weights = w + np.where(np.arange(HIDDEN + 1) == 0, 0.0, change)
        return {
            "hidden": hidden.astype(np.float32),
            "output": np.array([output], dtype=np.float32),
            "hidden_weights": hw.astype(np.float32),
            "hidden_prev": hp.astype(np.float32),
            "weights": weights.astype(np.float32),
            "prev_change": change.astype(np.float32),
        }
