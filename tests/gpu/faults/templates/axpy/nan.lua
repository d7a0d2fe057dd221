return lib("fault").template(OP, "nan", "y[i] = (i == n / 3) ? __int_as_float(0x7fc00000) : a * x[i] + y[i];")
