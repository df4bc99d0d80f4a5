"""Polynomial regression fitted with LBFGS (closure API), against NumPy's least squares.

Plain PyTorch, float64 throughout (torch.DoubleTensor, set_default_dtype).
"""

import numpy as np
import torch


def make_features(x, degree=3):
    x = x.unsqueeze(1)
    return torch.cat([x**i for i in range(1, degree + 1)], 1)


def main():
    torch.set_default_dtype(torch.float64)
    try:
        torch.manual_seed(0)
        w_target = torch.DoubleTensor([[0.5], [-1.2], [0.8]])
        b_target = 0.3
        x = torch.linspace(-1.5, 1.5, 64)
        noise = 0.01 * torch.randn(64, 1)
        X = make_features(x)
        y = X.mm(w_target) + b_target + noise
        fc = torch.nn.Linear(3, 1)
        opt = torch.optim.LBFGS(
            fc.parameters(),
            lr=0.5,
            max_iter=50,
            history_size=10,
            line_search_fn="strong_wolfe",
            tolerance_grad=1e-12,
            tolerance_change=1e-14,
        )
        losses = []

        def closure():
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(fc(X), y)
            loss.backward()
            return loss

        for _ in range(5):
            losses.append(opt.step(closure).item())
        A = np.concatenate([X.numpy(), np.ones((64, 1))], 1)
        sol = np.linalg.lstsq(A, y.numpy(), rcond=None)[0][:, 0]
        got = np.concatenate([fc.weight.detach().numpy()[0], fc.bias.detach().numpy()])
        return {
            "losses": losses,
            "coef_max_err": float(np.abs(got - sol).max()),
            "dtype_is_double": fc.weight.dtype == torch.float64,
        }
    finally:
        torch.set_default_dtype(torch.float32)


if __name__ == "__main__":
    print(main())
