-- 1024 threads of a kernel that needs far more than 64 registers: the launch
-- must fail with too many resources requested.
local body = { "float v[96];" }
body[#body + 1] = "#pragma unroll\n  for (int k = 0; k < 96; k++) v[k] = x[(i * 97 + k * 131) % n];"
body[#body + 1] = "float s = 0.f;\n#pragma unroll\n  for (int k = 0; k < 96; k++) s = s * v[(k * 37) % 96] + v[k];"
body[#body + 1] = "y[i] = a * x[i] + y[i] + 0.f * s;"
return lib("fault").template(OP, "regs", table.concat(body, "\n  "), { block = 1024 })
