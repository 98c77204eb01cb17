"""Torch tensors that require grad, passed to kernels as in Quadrants' torch.autograd recipe: their
data is read and written in place, their `.grad` is the gradient buffer (made as zeros when they
have none, as Quadrants makes it), so `kernel.grad` writes it; values measured on the reference.
Needs torch (skipped without it)."""

import pytest

import qdlab as qd

torch = pytest.importorskip("torch")


@qd.kernel
def cube(x: qd.types.ndarray(), y: qd.types.ndarray()):
    for i in range(4):
        y[i] = x[i] * x[i] * 3


def test_a_tensor_that_requires_grad_is_launched_with_its_grad() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x = torch.arange(4, dtype=torch.float32).requires_grad_()
    y = torch.zeros(4, requires_grad=True)
    cube(x, y)
    assert y.detach().tolist() == [0.0, 3.0, 12.0, 27.0]
    assert x.grad.tolist() == [0.0] * 4 and y.grad.tolist() == [0.0] * 4  # made, as there
    y.grad.fill_(1.0)
    cube.grad(x, y)
    assert x.grad.tolist() == [0.0, 6.0, 12.0, 18.0]


def test_the_autograd_function_recipe() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def forward(t: qd.types.ndarray(), o: qd.types.ndarray()):
        for i in range(8):
            o[i] = t[i] * t[i]

    @qd.kernel
    def backward(t_grad: qd.types.ndarray(), t: qd.types.ndarray(), o_grad: qd.types.ndarray()):
        for i in range(8):
            t_grad[i] = 2 * t[i] * o_grad[i]

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            out = torch.zeros_like(inp)
            ctx.save_for_backward(inp)
            forward(inp, out)
            return out

        @staticmethod
        def backward(ctx, out_grad):
            inp_grad = torch.zeros_like(out_grad)
            (inp,) = ctx.saved_tensors
            backward(inp_grad, inp, out_grad.contiguous())
            return inp_grad

    x = torch.full((8,), 2.0, requires_grad=True)
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [4.0] * 8
