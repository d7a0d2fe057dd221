return lib("fault").template(OP, "hang", "y[i] = a * x[i] + y[i];", { pre = "if (i == 0) { while (atomicAdd((unsigned int*)y, 0u) != 0xFFFFFFFFu) {} }" })
