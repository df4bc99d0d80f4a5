"""NumPy references: each algorithm's update written out from PyTorch's documented pseudo-code.

Every function takes the initial parameters (a list of float64 arrays), the gradients of
each step (``grads[t][i]`` for step t, parameter i; fixed, independent of the parameters)
and the hyper-parameters, and returns the parameters after all steps.

Where PyTorch keeps a scalar of the state as a float32 0-dim tensor (NAdam's
``mu_product``, ASGD's ``eta`` and ``mu``), the reference rounds it to float32 the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

f32 = np.float32


def _copy(params: list[np.ndarray]) -> list[np.ndarray]:
    return [p.astype(np.float64).copy() for p in params]


def sgd(params, grads, *, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    ps = _copy(params)
    bufs: list[Any] = [None] * len(ps)
    for gs in grads:
        for i, p in enumerate(ps):
            g = -gs[i] if maximize else gs[i].copy()
            if weight_decay:
                g = g + weight_decay * p
            if momentum:
                bufs[i] = g.copy() if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            ps[i] = p - lr * g
    return ps


def adam(
    params,
    grads,
    *,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    amsgrad=False,
    maximize=False,
    decoupled_weight_decay=False,
):
    b1, b2 = betas
    ps = _copy(params)
    m = [np.zeros_like(p) for p in ps]
    v = [np.zeros_like(p) for p in ps]
    vmax = [np.zeros_like(p) for p in ps]
    for t, gs in enumerate(grads, start=1):
        for i in range(len(ps)):
            g = -gs[i] if maximize else gs[i]
            if weight_decay:
                if decoupled_weight_decay:
                    ps[i] = ps[i] * (1 - lr * weight_decay)
                else:
                    g = g + weight_decay * ps[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            m_hat = m[i] / (1 - b1**t)
            if amsgrad:
                vmax[i] = np.maximum(vmax[i], v[i])
                vv = vmax[i]
            else:
                vv = v[i]
            ps[i] = ps[i] - lr * m_hat / (np.sqrt(vv) / np.sqrt(1 - b2**t) + eps)
    return ps


def adamw(params, grads, *, weight_decay=1e-2, **kw):
    return adam(params, grads, weight_decay=weight_decay, decoupled_weight_decay=True, **kw)


def adamax(params, grads, *, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, maximize=False):
    b1, b2 = betas
    ps = _copy(params)
    m = [np.zeros_like(p) for p in ps]
    u = [np.zeros_like(p) for p in ps]
    for t, gs in enumerate(grads, start=1):
        for i in range(len(ps)):
            g = -gs[i] if maximize else gs[i]
            if weight_decay:
                g = g + weight_decay * ps[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            u[i] = np.maximum(b2 * u[i], np.abs(g) + eps)
            ps[i] = ps[i] - lr / (1 - b1**t) * m[i] / u[i]
    return ps


def nadam(
    params,
    grads,
    *,
    lr=2e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    momentum_decay=4e-3,
    decoupled_weight_decay=False,
    maximize=False,
):
    b1, b2 = betas
    ps = _copy(params)
    m = [np.zeros_like(p) for p in ps]
    v = [np.zeros_like(p) for p in ps]
    mu_prod = [f32(1.0) for _ in ps]
    for t, gs in enumerate(grads, start=1):
        for i in range(len(ps)):
            g = -gs[i] if maximize else gs[i]
            if weight_decay:
                if decoupled_weight_decay:
                    ps[i] = ps[i] * (1 - lr * weight_decay)
                else:
                    g = g + weight_decay * ps[i]
            mu = b1 * (1.0 - 0.5 * 0.96 ** (t * momentum_decay))
            mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
            mu_prod[i] = f32(mu_prod[i] * f32(mu))
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            denom = np.sqrt(v[i] / (1 - b2**t)) + eps
            mp = float(mu_prod[i])
            ps[i] = ps[i] - lr * (1 - mu) / (1 - mp) * g / denom
            ps[i] = ps[i] - lr * mu_next / (1 - mp * mu_next) * m[i] / denom
    return ps


def radam(
    params,
    grads,
    *,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    decoupled_weight_decay=False,
    maximize=False,
):
    b1, b2 = betas
    ps = _copy(params)
    m = [np.zeros_like(p) for p in ps]
    v = [np.zeros_like(p) for p in ps]
    rho_inf = 2 / (1 - b2) - 1
    for t, gs in enumerate(grads, start=1):
        for i in range(len(ps)):
            g = -gs[i] if maximize else gs[i]
            if weight_decay:
                if decoupled_weight_decay:
                    ps[i] = ps[i] * (1 - lr * weight_decay)
                else:
                    g = g + weight_decay * ps[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            m_hat = m[i] / (1 - b1**t)
            rho_t = rho_inf - 2 * t * b2**t / (1 - b2**t)
            if rho_t > 5:
                adaptive = np.sqrt(1 - b2**t) / (np.sqrt(v[i]) + eps)
                rect = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                ps[i] = ps[i] - lr * m_hat * adaptive * rect
            else:
                ps[i] = ps[i] - lr * m_hat
    return ps


def adagrad(
    params, grads, *, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10, maximize=False
):
    ps = _copy(params)
    s = [np.full_like(p, initial_accumulator_value) for p in ps]
    for t, gs in enumerate(grads, start=1):
        for i in range(len(ps)):
            g = -gs[i] if maximize else gs[i]
            if weight_decay:
                g = g + weight_decay * ps[i]
            clr = lr / (1 + (t - 1) * lr_decay)
            s[i] = s[i] + g * g
            ps[i] = ps[i] - clr * g / (np.sqrt(s[i]) + eps)
    return ps


def adadelta(params, grads, *, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    ps = _copy(params)
    v = [np.zeros_like(p) for p in ps]
    u = [np.zeros_like(p) for p in ps]
    for gs in grads:
        for i in range(len(ps)):
            g = -gs[i] if maximize else gs[i]
            if weight_decay:
                g = g + weight_decay * ps[i]
            v[i] = rho * v[i] + (1 - rho) * g * g
            delta = np.sqrt(u[i] + eps) / np.sqrt(v[i] + eps) * g
            u[i] = rho * u[i] + (1 - rho) * delta * delta
            ps[i] = ps[i] - lr * delta
    return ps


def rmsprop(
    params, grads, *, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False, maximize=False
):
    ps = _copy(params)
    v = [np.zeros_like(p) for p in ps]
    ga = [np.zeros_like(p) for p in ps]
    buf = [np.zeros_like(p) for p in ps]
    for gs in grads:
        for i in range(len(ps)):
            g = -gs[i] if maximize else gs[i]
            if weight_decay:
                g = g + weight_decay * ps[i]
            v[i] = alpha * v[i] + (1 - alpha) * g * g
            if centered:
                ga[i] = alpha * ga[i] + (1 - alpha) * g
                avg = np.sqrt(v[i] - ga[i] * ga[i])
            else:
                avg = np.sqrt(v[i])
            avg = avg + eps
            if momentum > 0:
                buf[i] = momentum * buf[i] + g / avg
                ps[i] = ps[i] - lr * buf[i]
            else:
                ps[i] = ps[i] - lr * g / avg
    return ps


def rprop(params, grads, *, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    etaminus, etaplus = etas
    smin, smax = step_sizes
    ps = _copy(params)
    prev = [np.zeros_like(p) for p in ps]
    size = [np.full_like(p, lr) for p in ps]
    for gs in grads:
        for i in range(len(ps)):
            g = -gs[i] if maximize else gs[i].copy()
            prod = g * prev[i]
            factor = np.where(prod > 0, etaplus, np.where(prod < 0, etaminus, 1.0))
            size[i] = np.clip(size[i] * factor, smin, smax)
            g = np.where(prod < 0, 0.0, g)
            ps[i] = ps[i] - np.sign(g) * size[i]
            prev[i] = g
    return ps


def asgd(params, grads, *, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
    """Returns (params, averaged params ``ax``)."""
    ps = _copy(params)
    ax = [np.zeros_like(p) for p in ps]
    eta = [f32(lr) for _ in ps]
    mu = [f32(1.0) for _ in ps]
    for t, gs in enumerate(grads, start=1):
        for i in range(len(ps)):
            g = -gs[i] if maximize else gs[i]
            if weight_decay:
                g = g + weight_decay * ps[i]
            e = float(eta[i])
            ps[i] = ps[i] * (1 - lambd * e)
            ps[i] = ps[i] - e * g
            if float(mu[i]) != 1:
                ax[i] = ax[i] + (ps[i] - ax[i]) * float(mu[i])
            else:
                ax[i] = ps[i].copy()
            eta[i] = f32(lr / ((1 + lambd * lr * t) ** alpha))
            mu[i] = f32(1 / max(1, t - t0))
    return ps, ax


REFERENCES = {
    "SGD": sgd,
    "Adam": adam,
    "AdamW": adamw,
    "Adamax": adamax,
    "NAdam": nadam,
    "RAdam": radam,
    "Adagrad": adagrad,
    "Adadelta": adadelta,
    "RMSprop": rmsprop,
    "Rprop": rprop,
    "ASGD": lambda params, grads, **kw: asgd(params, grads, **kw)[0],
}
