return lib("fault").template(OP, "tail", "if (i < n - 1) y[i] = a * x[i] + y[i];")
