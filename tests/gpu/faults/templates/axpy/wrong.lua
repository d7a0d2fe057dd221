return lib("fault").template(OP, "wrong", "y[i] = a * x[i] + y[i] + 0.01f;")
