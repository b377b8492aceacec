"""Task 1: the top-5 Hessian eigenvalues of a small convnet (about 21k parameters) by Lanczos.

Both sides run ``scipy.sparse.linalg.eigsh(k=5, which="LA")`` (ARPACK's implicitly restarted
Lanczos) from the same ``v0`` with the same ``tol``; only the operator differs: ours is
``hvp_operator(loss, model, x, labels).as_linear_operator()``, torch's the gradient built once with
``create_graph=True`` and pulled back per product (retained graph), or ``jvp(grad)`` per product
(torch.func).  Every call counts its products, and the check demands the same count, so the timings
compare the same work.  Recording the operator (ours) and building the graph (torch) are inside the call.
"""

import numpy as np

import autodiff.numpy as anp
from autodiff import hvp_operator
from autodiff.extend import value_of
from autodiff.nn.functional import relu
from layers import Chain, Conv2d, Dense, MaxPool2d, save_torch_state_dict
from traversal import trainables

from ._so_krylov import TorchRetainedHvp, counted, shapes_of, torch_func_hvp, unflatten
from ._so_mlp import loss
from ._so_task import Task

CLASSES = 10


def flatten(x):
    """``(N, C, H, W) -> (N, C*H*W)``, as ``torch.nn.Flatten``."""
    return anp.reshape(x, (np.shape(value_of(x))[0], -1))


def convnet(image, channels, hidden, seed=0):
    """conv3-relu-pool, conv3-relu-pool, dense-relu, dense over ``(N, 1, image, image)`` input, float64.

    The layer indices match :func:`torch_convnet`'s, so ``save_torch_state_dict`` names line up.
    """
    c1, c2 = channels
    return Chain([
        Conv2d.init(1, c1, 3, padding=1, seed=seed, dtype=np.float64), relu, MaxPool2d(2),
        Conv2d.init(c1, c2, 3, padding=1, seed=seed + 1, dtype=np.float64), relu, MaxPool2d(2),
        flatten, Dense.init(c2 * (image // 4) ** 2, hidden, seed=seed + 2, dtype=np.float64), relu,
        Dense.init(hidden, CLASSES, seed=seed + 3, dtype=np.float64),
    ])


def torch_convnet(torch, model, image, channels, hidden):
    """The same network as a ``torch.nn.Sequential`` holding ``model``'s weights."""
    nn, (c1, c2) = torch.nn, channels
    net = nn.Sequential(
        nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(c2 * (image // 4) ** 2, hidden), nn.ReLU(), nn.Linear(hidden, CLASSES),
    ).double()
    net.load_state_dict(save_torch_state_dict(model))
    return net


def convnet_eigenvalues(torch=None, image=16, channels=(8, 16), hidden=75, batch=8, k=5, tol=1e-6, seed=0):
    """The task; the defaults give 21,283 parameters (16×16 single-channel images, batch 8)."""
    rng = np.random.default_rng(seed)
    model = convnet(image, channels, hidden, seed)
    x, labels = rng.standard_normal((batch, 1, image, image)), rng.integers(0, CLASSES, batch)
    n = sum(p.size for p in trainables(model))
    v0 = rng.standard_normal(n)

    def top(matvec):
        """``(the top k eigenvalues ascending, how many products ARPACK asked for)``."""
        from scipy.sparse.linalg import eigsh

        op, calls = counted((n, n), np.float64, matvec)
        values = eigsh(op, k=k, which="LA", v0=v0, tol=tol, return_eigenvectors=False)
        return np.sort(values), np.array(calls[0])

    def ours():
        return top(hvp_operator(loss, model, x, labels).as_linear_operator().matvec)

    variants = {} if torch is None else _torch_variants(torch, model, x, labels, top, (image, channels, hidden))
    return Task(f"Hessian top-{k} eigenvalues, convnet ({n} parameters, batch {batch})", ours, variants,
                _check(tol), goal=1.2, note="eigsh over the HVP operator; same v0, tol and product count",
                problem=dict(model=model, x=x, labels=labels, loss=loss, k=k, tol=tol))


def _torch_variants(torch, model, x, labels, top, sizes):
    net = torch_convnet(torch, model, *sizes)
    xt, yt = torch.tensor(x), torch.tensor(labels)
    cross_entropy = torch.nn.functional.cross_entropy
    names = [name for name, _ in net.named_parameters()]
    shapes = shapes_of(list(net.parameters()))
    flat = torch.cat([p.detach().reshape(-1) for p in net.parameters()])

    def flat_loss(p):
        return cross_entropy(torch.func.functional_call(net, dict(zip(names, unflatten(p, shapes))), (xt,)), yt)

    def retained():
        params = list(net.parameters())
        return top(TorchRetainedHvp(torch, params, cross_entropy(net(xt), yt)))

    def func():
        return top(torch_func_hvp(torch, flat_loss, flat))

    return {"retained graph": retained, "torch.func": func}


def _check(tol):
    def check(ours, theirs):
        assert int(ours[1]) == int(theirs[1]), (
            f"convnet eigenvalues: ARPACK asked ours for {int(ours[1])} products and torch for "
            f"{int(theirs[1])}: the two calls did different work, so their times cannot be compared")
        # ARPACK stops when each Ritz value's residual is below tol * |value|, and the eigenvalue error is at
        # most that residual: each side is within tol of the truth, so within 2 tol of each other.
        np.testing.assert_allclose(ours[0], theirs[0], rtol=2 * tol, atol=0,
                                   err_msg="convnet eigenvalues: ours against torch's")

    return check
