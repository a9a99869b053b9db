"""Closed-form Hessians for tests/grad_hvp.rs, by sympy.

Run `python3 tests/reference/hessians.py`; it prints each function's Hessian at the
test's point with 17 significant digits, which the test holds as its reference.
"""
import sympy as sp

x, y, z = sp.symbols("x y z")

CASES = {
    # name: (expression, variables, point)
    "mixed": (sp.tanh(x * y) + x**3 * y + sp.exp(z) * sp.sin(x * z) / (1 + y**2),
              (x, y, z), (0.3, 0.7, -0.4)),
    "hypot": (sp.sqrt(x**2 + y**2) * z, (x, y, z), (0.6, -0.8, 1.5)),
    "rosenbrock2": (100 * (y - x**2) ** 2 + (1 - x) ** 2, (x, y), (-1.2, 1.0)),
    "logs": (sp.log(x) * sp.atan2(y, x) + sp.sqrt(x * y) + sp.log(1 + x, 2 + y),
             (x, y), (0.8, 1.7)),
}

for name, (expr, variables, point) in CASES.items():
    at = dict(zip(variables, point))
    hessian = sp.hessian(expr, variables)
    rows = []
    for i in range(len(variables)):
        rows.append("[" + ", ".join(f"{float(hessian[i, j].subs(at).evalf(30)):.17e}"
                                    for j in range(len(variables))) + "]")
    print(f"{name}: [" + ", ".join(rows) + "]")
