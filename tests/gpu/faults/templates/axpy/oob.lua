return lib("fault").template(OP, "oob", "y[i + 4000000000LL] = a * x[i] + y[i];")
