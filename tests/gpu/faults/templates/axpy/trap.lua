return lib("fault").template(OP, "trap", "if (i == n / 2) __trap(); y[i] = a * x[i] + y[i];")
