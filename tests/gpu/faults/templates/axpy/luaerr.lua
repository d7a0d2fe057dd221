return lib("fault").template(OP, "luaerr", "y[i] = a * x[i] + y[i];", { lua_error = true })
