return lib("fault").template(OP, "smem", "y[i] = a * x[i] + y[i];", { smem = 300 * 1024 })
